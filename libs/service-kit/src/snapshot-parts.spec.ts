import { everyPart, leadingWithin, snapshotPart } from './snapshot-parts';

describe('snapshotPart', () => {
  const items = ['c', 'a', 'e', 'b', 'd'].map((id) => ({ id, blob: 'x'.repeat(90) }));

  it('answers the items in key order, as many as fit, and where to go on; the parts put together are every item once', () => {
    const size = Buffer.byteLength(JSON.stringify(items[0]));
    const seen: string[] = [];
    let after: string | undefined;
    let parts = 0;
    do {
      const part = snapshotPart(items, (item) => item.id, after, 2 * size);
      expect(part.items.length).toBeLessThanOrEqual(2);
      seen.push(...part.items.map((item) => item.id));
      after = part.next_after;
      parts += 1;
    } while (after !== undefined);
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(parts).toBe(3);
  });

  it('answers everything at once when it fits, and one item alone when it does not', () => {
    expect(snapshotPart(items, (item) => item.id)).toEqual({ items: [...items].sort((a, b) => (a.id < b.id ? -1 : 1)) });
    const one = snapshotPart(items, (item) => item.id, undefined, 1);
    expect([one.items.map((item) => item.id), one.next_after]).toEqual([['a'], 'a']);
    expect(snapshotPart(items, (item) => item.id, 'e')).toEqual({ items: [] });
  });

  it('keeps the leading items whose JSON fits, at least one', () => {
    const item = (n: number) => ({ n, blob: 'y'.repeat(100) });
    const size = Buffer.byteLength(JSON.stringify(item(1)));
    expect(leadingWithin([1, 2, 3, 4].map(item), 2 * size).map((kept) => kept.n)).toEqual([1, 2]);
    expect(leadingWithin([1, 2].map(item), 1).map((kept) => kept.n)).toEqual([1]);
    expect(leadingWithin([])).toEqual([]);
    expect(leadingWithin(['é'], 2)).toEqual(['é']);
    expect(leadingWithin(['é', 'é'], 4)).toEqual(['é']);
  });

  it('orders from the greatest key when asked to (a list newest first), and goes on after the last one answered', () => {
    const first = snapshotPart(items, (item) => item.id, undefined, 2 * Buffer.byteLength(JSON.stringify(items[0])), true);
    expect([first.items.map((item) => item.id), first.next_after]).toEqual([['e', 'd'], 'd']);
    expect(snapshotPart(items, (item) => item.id, 'd', undefined, true).items.map((item) => item.id)).toEqual(['c', 'b', 'a']);
  });

  it('everyPart asks after the last key until no part names a next one, keeping every item in order', async () => {
    const parts: Record<string, { items: number[]; next_after?: string }> = { '': { items: [1, 2], next_after: 'k2' }, k2: { items: [3], next_after: 'k3' }, k3: { items: [] } };
    const asked: Array<string | undefined> = [];
    const all = await everyPart(async (after) => (asked.push(after), parts[after ?? '']));
    expect(all).toEqual([1, 2, 3]);
    expect(asked).toEqual([undefined, 'k2', 'k3']);
  });
});
