/**
 * A capture time as the Record API and imports take it: a date and a time with its zone, `Z` or an
 * offset (converted to UTC when stored); seconds and up to nine fraction digits optional. A date
 * alone, a time without a zone, a day the month does not have, or a moment before year 1 (in UTC)
 * is refused.
 */
export const ZONED_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** 0001-01-01T00:00:00Z: the first moment a capture time can be stored at (UTC). */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');

export function isZonedDateTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = ZONED_DATE_TIME.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one.
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  const instant = Date.parse(value);
  // Stored in UTC, it must fall in year 1 or later: the database knows no year 0 (an import row of
  // year 0 passed its dry run and then failed its chunk).
  return !Number.isNaN(instant) && instant >= FIRST_INSTANT;
}

/**
 * The order an import's rows are decided in (their indexes): by when each decision was captured,
 * rows captured at the same moment in row order. A person's history is then recorded as it was
 * made whatever order the export lists it in (newest first, by person, shuffled): each record
 * supersedes the one captured before it, and withdraws what it no longer grants there, as if sent
 * one by one in that order. Decided in row order, a row captured before the person's newest record
 * was late history, linked to nothing before it. Rows whose `captured_at` is refused come first
 * (they are refused whatever their place).
 */
export function importDecisionOrder(rows: readonly unknown[]): number[] {
  const capturedAt = rows.map((row) => {
    const value = typeof row === 'object' && row !== null ? (row as { captured_at?: unknown }).captured_at : undefined;
    return isZonedDateTime(value) ? Date.parse(value) : -Infinity;
  });
  return rows.map((_, index) => index).sort((a, b) => capturedAt[a] - capturedAt[b] || a - b);
}
