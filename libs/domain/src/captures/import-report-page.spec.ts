import fc from 'fast-check';
import { DomainError } from '../errors';
import { encodeCursor } from '../paging/paging';
import { importReportCursor, importReportPage, importReportPosition, importReportSnapshot, ImportReportPosition } from './import-report-page';

const IMPORT = 'imp_us0123456789abcdefghij';
const OTHER = 'imp_us9876543210abcdefghij';

/** `run` refuses with a 400 `invalid_request` naming `cursor`. */
const refusesCursor = (run: () => unknown) => {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(DomainError);
  expect(thrown).toMatchObject({ code: 'invalid_request', details: [{ field: 'cursor', reason: expect.any(String) }] });
};

/**
 * What the decisions service reads for a page (in SQL): of the first `of` rows the report holds (in
 * the order they were decided), those after the position's index, by index, `take` of them.
 */
function following<T extends { index: number }>(held: readonly T[], snapshot: ImportReportPosition, take: number): T[] {
  return held
    .slice(0, snapshot.of)
    .filter((row) => row.index > snapshot.after)
    .sort((a, b) => a.index - b.index)
    .slice(0, take);
}

describe('import report cursors', () => {
  it('round-trip every position a report can have, opaque and naming the import', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_998 }), fc.integer({ min: 1, max: 10_000 }), (after, of) => {
        const cursor = importReportCursor(IMPORT, { after, of });
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(cursor).not.toContain(IMPORT);
        expect(importReportPosition(cursor, IMPORT)).toEqual({ after, of });
      }),
    );
  });

  it.each([undefined, null, ''])('read %j as the first page', (cursor) => expect(importReportPosition(cursor, IMPORT)).toBeUndefined());

  it("refuses another import's cursor, or another list's, naming cursor", () => {
    refusesCursor(() => importReportPosition(importReportCursor(OTHER, { after: 3, of: 10 }), IMPORT));
    refusesCursor(() => importReportPosition(encodeCursor({ list: 'applications', after: ['2026-01-01T00:00:00.000Z', 'tp_x'] }), IMPORT));
  });

  it.each([
    ['not base64url', '!!!'],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['no position', encodeCursor({ list: `import_rows:${IMPORT}` })],
    ['a fractional index', encodeCursor({ list: `import_rows:${IMPORT}`, after: 1.5, of: 4 })],
    ['a negative index', encodeCursor({ list: `import_rows:${IMPORT}`, after: -1, of: 4 })],
    ['an index as text', encodeCursor({ list: `import_rows:${IMPORT}`, after: '3', of: 4 })],
    ['no rows held', encodeCursor({ list: `import_rows:${IMPORT}`, after: 3, of: 0 })],
    ['an unsafe count', encodeCursor({ list: `import_rows:${IMPORT}`, after: 3, of: 2 ** 60 })],
    ['a field it never holds', encodeCursor({ list: `import_rows:${IMPORT}`, after: 3, of: 4, limit: 10 })],
    ['a position past the last row an import can have', encodeCursor({ list: `import_rows:${IMPORT}`, after: 9_999, of: 10_000 })],
    ['more rows than an import takes', encodeCursor({ list: `import_rows:${IMPORT}`, after: 3, of: 10_001 })],
  ])('refuses a cursor with %s, naming cursor', (_what, cursor) => refusesCursor(() => importReportPosition(cursor, IMPORT)));
});

describe('importReportSnapshot', () => {
  it('starts a walk at the first row, over the rows the report holds now', () => {
    expect(importReportSnapshot(undefined, 42)).toEqual({ after: -1, of: 42 });
    expect(importReportSnapshot(undefined, 0)).toEqual({ after: -1, of: 0 });
  });

  it('goes on over the rows the walk began with, also when the report has grown since', () => {
    expect(importReportSnapshot({ after: 7, of: 10 }, 10)).toEqual({ after: 7, of: 10 });
    expect(importReportSnapshot({ after: 7, of: 10 }, 600)).toEqual({ after: 7, of: 10 });
  });

  it('refuses a cursor naming more rows than the report ever held (a report only grows), naming cursor', () => {
    refusesCursor(() => importReportSnapshot({ after: 7, of: 11 }, 10));
  });
});

describe('importReportPage', () => {
  const rows = (indexes: number[]) => indexes.map((index) => ({ index, outcome: 'recorded' as const }));

  it('holds at most limit rows and names the next page only while rows follow', () => {
    expect(importReportPage(rows([0, 1, 2]), 2, 5)).toEqual({ rows: rows([0, 1]), next: { after: 1, of: 5 } });
    expect(importReportPage(rows([3, 4]), 2, 5)).toEqual({ rows: rows([3, 4]) });
    expect(importReportPage([], 2, 0)).toEqual({ rows: [] });
  });

  it('stops where the rows stop fitting (one message on the bus) and still names the next page', () => {
    const fit = <T>(page: T[]) => page.slice(0, 1);
    expect(importReportPage(rows([0, 1, 2]), 3, 3, fit)).toEqual({ rows: rows([0]), next: { after: 0, of: 3 } });
    expect(importReportPage(rows([2]), 3, 3, fit)).toEqual({ rows: rows([2]) });
  });

  it('lists every row of the report once, by index, however it is paged, and while the import adds rows', () => {
    // A report's rows in the order they were decided (captured_at order, not index order), chunks
    // appended while someone pages through it: the walk lists the rows it began with, each once, by
    // index; a walk begun after the import lists every row.
    const report = fc
      .integer({ min: 0, max: 120 })
      .chain((n) => fc.tuple(fc.shuffledSubarray(Array.from({ length: n }, (_, i) => i), { minLength: n, maxLength: n }), fc.integer({ min: 0, max: n })));
    fc.assert(
      fc.property(report, fc.integer({ min: 1, max: 25 }), fc.integer({ min: 1, max: 4 }), ([decided, heldAtStart], limit, fitting) => {
        const all = rows(decided);
        let held = heldAtStart;
        const listed: number[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const snapshot = importReportSnapshot(importReportPosition(cursor, IMPORT), held);
          const page = importReportPage(following(all, snapshot, limit + 1), limit, snapshot.of, (candidates) => candidates.slice(0, fitting));
          listed.push(...page.rows.map((row) => row.index));
          cursor = page.next ? importReportCursor(IMPORT, page.next) : undefined;
          // The import records another chunk between two pages.
          held = Math.min(all.length, held + 7);
          pages += 1;
          expect(pages).toBeLessThanOrEqual(all.length + 1);
        } while (cursor !== undefined);
        const began = decided.slice(0, heldAtStart).sort((a, b) => a - b);
        expect(listed).toEqual(began);
      }),
    );
  });
});
