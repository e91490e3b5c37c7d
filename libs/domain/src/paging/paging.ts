import { DomainError } from '../errors';

/** One page of a list: `{"data": [...], "next_cursor": string|null}`. */
export type Page<T> = { data: T[]; next_cursor: string | null };

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
/** Longest cursor accepted; ours are far shorter. */
export const MAX_CURSOR_LENGTH = 2048;

const invalidLimit = () =>
  new DomainError('invalid_request', 'The limit parameter is not valid', [
    { field: 'limit', reason: `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}` },
  ]);

const malformedCursor = () =>
  new DomainError('invalid_request', 'The cursor parameter is not valid', [{ field: 'cursor', reason: 'malformed cursor' }]);

/**
 * `?limit=` as a page size: absent (undefined, null or an empty string) means 50; otherwise an
 * integer from 1 to 200, given as a number or as decimal digits (the query-string form). Anything
 * else, including values above 200, is `invalid_request` naming `limit` (never silently clamped).
 */
export function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_PAGE_LIMIT;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\d{1,4}$/.test(raw)) value = Number(raw);
  else throw invalidLimit();
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE_LIMIT) throw invalidLimit();
  return value;
}

/**
 * An opaque cursor for a position in a list: the position's JSON as base64url. Keep positions small
 * (a sort key and an id): a cursor longer than MAX_CURSOR_LENGTH would be refused by decodeCursor,
 * so encoding one throws a RangeError instead.
 */
export function encodeCursor(value: object): string {
  const cursor = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  if (cursor.length > MAX_CURSOR_LENGTH) throw new RangeError(`cursor positions must encode to at most ${MAX_CURSOR_LENGTH} characters`);
  return cursor;
}

/**
 * The position a cursor stands for; undefined when there is none (undefined, null or empty). A value
 * that is not a cursor we could have issued (not base64url, not JSON, not a JSON object, too long)
 * is `invalid_request` naming `cursor`. Cursors are not signed: check the fields you read from it.
 */
export function decodeCursor<T>(raw: unknown): T | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw) || raw.length % 4 === 1) {
    throw malformedCursor();
  }
  const bytes = Buffer.from(raw, 'base64url');
  if (bytes.toString('base64url') !== raw) throw malformedCursor(); // non-canonical trailing bits
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw malformedCursor();
  }
  if (typeof value !== 'object' || value === null) throw malformedCursor();
  return value as T;
}
