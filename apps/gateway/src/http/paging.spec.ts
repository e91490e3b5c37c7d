import fc from 'fast-check';
import { DomainError, encodeCursor } from '@dcr/domain';
import { pageOf } from './paging';

interface Item {
  id: string;
  created_at: string;
}

const position = (item: Item) => [item.created_at, item.id];
const items = fc.uniqueArray(
  fc.record({ id: fc.stringMatching(/^tok_[a-z0-9]{4}$/), created_at: fc.integer({ min: 0, max: 20 }).map((n) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString()) }),
  { selector: (item) => item.id, maxLength: 40 },
);

describe('pageOf', () => {
  it('pages through every item once, in position order, whatever is deleted between pages', () => {
    fc.assert(
      fc.property(items, fc.integer({ min: 1, max: 7 }), fc.array(fc.nat(), { maxLength: 40 }), (all, limit, deletions) => {
        let current = [...all];
        const seen: Item[] = [];
        const deleted = new Set<string>();
        let cursor: string | undefined;
        for (let round = 0; round <= all.length; round++) {
          const page = pageOf(current, position, { limit, cursor }, 'api_tokens:app');
          seen.push(...page.data);
          if (!page.next_cursor) break;
          cursor = page.next_cursor;
          // Between pages the client deletes something: possibly the very item its cursor names.
          const pick = deletions[round];
          if (pick !== undefined && current.length > 0) {
            const gone = current[pick % current.length];
            deleted.add(gone.id);
            current = current.filter((item) => item.id !== gone.id);
          }
        }
        const expectedOrder = [...all].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
        const ids = seen.map((item) => item.id);
        expect(new Set(ids).size).toBe(ids.length);
        // Every item never deleted is seen, and what is seen keeps the order.
        for (const item of all) if (!deleted.has(item.id)) expect(ids).toContain(item.id);
        expect(ids).toEqual(expectedOrder.map((item) => item.id).filter((id) => ids.includes(id)));
      }),
    );
  });

  it('refuses a cursor of another list, naming cursor', () => {
    const list = [
      { id: 'tok_a', created_at: '2026-01-01T00:00:00.000Z' },
      { id: 'tok_b', created_at: '2026-01-01T00:00:01.000Z' },
    ];
    const first = pageOf(list, position, { limit: 1 }, 'api_tokens:app_1');
    expect(first.next_cursor).not.toBeNull();
    for (const cursor of [
      encodeCursor({ list: 'api_tokens:app_2', after: ['2026-01-01T00:00:00.000Z', 'tok_a'] }),
      encodeCursor({ after: 'tok_a' }),
      encodeCursor({ list: 'api_tokens:app_1', after: [] }),
      encodeCursor({ list: 'api_tokens:app_1', after: [1] }),
    ]) {
      let refused: unknown;
      try {
        pageOf(list, position, { cursor }, 'api_tokens:app_1');
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(DomainError);
      expect((refused as DomainError).details).toEqual([{ field: 'cursor', reason: 'a cursor of another list' }]);
    }
    expect(() => pageOf(list, position, { cursor: first.next_cursor! }, 'publishable_keys:app_1')).toThrow(DomainError);
    expect(pageOf(list, position, { cursor: first.next_cursor! }, 'api_tokens:app_1').data.map((item) => item.id)).toEqual(['tok_b']);
  });
});
