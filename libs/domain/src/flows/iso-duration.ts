/**
 * An ISO 8601 duration: `PnYnMnWnDTnHnMnS` with non-negative integer components, e.g. `P1Y`, `P6M`,
 * `P30D`, `P2W`, `PT12H`, `P1Y2M3DT4H5M6S`. Components absent from the text are 0.
 */
export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/** At most 9 digits per component: enough for any real duration, and no precision loss. */
const DURATION =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$/;

/**
 * Parses an ISO 8601 duration, or answers null when `text` is not one. Accepted: the designators in
 * upper case, in order, at least one component, integer components only (no fractions, no sign, no
 * alternative `PYYYY-MM-DD` form); a `T` must be followed by a time component (`P1DT` is refused).
 * Weeks may be combined with other components (ISO 8601-1:2019 allows it).
 */
export function parseIsoDuration(text: unknown): IsoDuration | null {
  if (typeof text !== 'string') return null;
  const match = DURATION.exec(text);
  if (!match) return null;
  const [, years, months, weeks, days, hours, minutes, seconds] = match;
  if ([years, months, weeks, days, hours, minutes, seconds].every((part) => part === undefined)) return null;
  if (text.endsWith('T')) return null;
  const n = (part: string | undefined) => (part === undefined ? 0 : Number(part));
  return {
    years: n(years),
    months: n(months),
    weeks: n(weeks),
    days: n(days),
    hours: n(hours),
    minutes: n(minutes),
    seconds: n(seconds),
  };
}

export function isIsoDuration(text: unknown): text is string {
  return parseIsoDuration(text) !== null;
}

/** True when every component is 0 (`PT0S`, `P0D`). */
export function isZeroDuration(duration: IsoDuration): boolean {
  return Object.values(duration).every((part) => part === 0);
}

/** The shortest ISO 8601 text of a duration (`P1Y2M`, `PT0S` for zero). */
export function formatIsoDuration(duration: IsoDuration): string {
  const { years, months, weeks, days, hours, minutes, seconds } = duration;
  const date = `${years ? `${years}Y` : ''}${months ? `${months}M` : ''}${weeks ? `${weeks}W` : ''}${days ? `${days}D` : ''}`;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  if (!date && !time) return 'PT0S';
  return `P${date}${time ? `T${time}` : ''}`;
}

function daysInUtcMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * `start + duration` in UTC calendar arithmetic: years and months first, clamped to the end of the
 * month (2024-01-31 + P1M = 2024-02-29, 2024-02-29 + P1Y = 2025-02-28), then weeks and days as
 * whole UTC days, then hours, minutes and seconds. A consent's expiry is
 * `addIsoDuration(captured_at, parseIsoDuration(consent_duration))`. A fresh Date; RangeError when
 * the result is outside the Date range.
 */
export function addIsoDuration(start: Date, duration: IsoDuration): Date {
  const base = start.getTime();
  if (!Number.isFinite(base)) throw new RangeError('addIsoDuration needs a valid start date');
  const date = new Date(base);
  const totalMonths = date.getUTCMonth() + duration.months + 12 * (date.getUTCFullYear() + duration.years);
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths - 12 * year;
  const day = Math.min(date.getUTCDate(), daysInUtcMonth(year, month));
  date.setUTCFullYear(year, month, day);
  const millis =
    date.getTime() +
    ((duration.weeks * 7 + duration.days) * 86_400 + duration.hours * 3_600 + duration.minutes * 60 + duration.seconds) * 1000;
  const result = new Date(millis);
  if (!Number.isFinite(result.getTime())) throw new RangeError('the date plus the duration is out of range');
  return result;
}
