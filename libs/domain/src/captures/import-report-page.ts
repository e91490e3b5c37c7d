import { DomainError } from '../errors';
import { decodeCursor, encodeCursor } from '../paging/paging';

/**
 * Where a page of an import's report starts: after the row whose index is `after` (-1 before the
 * first), among the first `of` rows the report held, in the order they were decided. A report only
 * grows (each chunk of an import appends the rows it decided, in `captured_at` order, not by
 * index), so those `of` rows never change: a walk through the pages that keeps its `of` lists each
 * of them once, by index, also while the import is still adding rows, and a walk begun later
 * lists those too.
 */
export interface ImportReportPosition {
  after: number;
  of: number;
}

/** The most rows one import takes (the contract: at most 10,000 records per request), so the most a report holds. */
export const MAX_IMPORT_ROWS = 10_000;

/** The fields an import report cursor holds: one with any other was not issued here. */
const CURSOR_FIELDS = ['list', 'after', 'of'];

/** Which list an import report cursor pages: that import's rows, and no other's. */
function importReportList(importId: string): string {
  return `import_rows:${importId}`;
}

const refusedCursor = () => new DomainError('invalid_request', "The cursor does not belong to this import's report", [{ field: 'cursor', reason: "not a cursor of this import's report" }]);

const isCount = (value: unknown, least: number): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= least;

/** The cursor of the page after `position` (the last row listed and the rows the walk covers): opaque, naming the import's report. */
export function importReportCursor(importId: string, position: ImportReportPosition): string {
  return encodeCursor({ list: importReportList(importId), after: position.after, of: position.of });
}

/**
 * The position an import report cursor names (undefined without one). A cursor that is no cursor
 * (malformed), one of another list or another import's report, or one that could not have been
 * issued (changed by hand: a field it never holds, a position that is not a row index of an import
 * and a count of rows a report can hold) is `invalid_request` naming `cursor`. Cursors are not
 * signed: a position changed by hand into another a report could have pages the import's own rows.
 */
export function importReportPosition(cursor: unknown, importId: string): ImportReportPosition | undefined {
  const decoded = decodeCursor<{ list?: unknown; after?: unknown; of?: unknown }>(cursor);
  if (decoded === undefined) return undefined;
  if (decoded.list !== importReportList(importId) || !Object.keys(decoded).every((key) => CURSOR_FIELDS.includes(key))) throw refusedCursor();
  if (!isCount(decoded.after, 0) || !isCount(decoded.of, 1) || decoded.after >= MAX_IMPORT_ROWS - 1 || decoded.of > MAX_IMPORT_ROWS) throw refusedCursor();
  return { after: decoded.after, of: decoded.of };
}

/**
 * The rows a page is read from, for a report that holds `held` rows now: a walk's first page covers
 * all of them; a later page the ones its walk began with. A cursor covering more rows than the
 * report holds was not issued for it (a report only grows): `invalid_request` naming `cursor`.
 */
export function importReportSnapshot(position: ImportReportPosition | undefined, held: number): ImportReportPosition {
  if (position === undefined) return { after: -1, of: held };
  if (position.of > held) throw refusedCursor();
  return position;
}

/**
 * One page from `following`: the rows of the walk after its position, by index (at least `limit` + 1
 * of them while that many are left, so that it can tell whether more follow). The page holds at most
 * `limit` of them, fewer when `fit` keeps fewer (what fits one message on the bus), and names the
 * next position while rows are left.
 */
export function importReportPage<T extends { index: number }>(following: readonly T[], limit: number, of: number, fit: (rows: T[]) => T[] = (rows) => rows): { rows: T[]; next?: ImportReportPosition } {
  const rows = fit(following.slice(0, limit));
  if (rows.length === 0 || rows.length >= following.length) return { rows };
  return { rows, next: { after: rows[rows.length - 1].index, of } };
}
