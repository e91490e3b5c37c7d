/**
 * Quick acceptances for the two built-in rules that cost most on a message of the Record API's path:
 * `@IsISO8601()` (validator.js's strict check builds a Date and runs three regular expressions,
 * about 1.3 µs a value) and `@IsEmail()` (about 2 µs: its options merged, the domain split and
 * checked label by label). Every message of a consent record carries several time stamps (its
 * capture time, each audit event's time, each directory entry's time) and its person's address.
 *
 * Each function accepts only the plainest form of its kind, and everything it accepts validator.js
 * accepts too (a property test checks this against validator.js itself). What it does not accept
 * is not refused: `passesMessageRules` then asks the rule's own constraint, so the set of accepted
 * values is the rule's own either way; only the common case is faster (docs/performance.md,
 * twenty-first session).
 */

/**
 * `2026-11-24T13:23:29.593Z`, `…+02:00`: RFC 3339 with a `T`, what `Date.prototype.toISOString`
 * writes, in the years 1000 to 9999 (validator.js reads a year below 100 as one of the 1900s or
 * 2000s, and refuses the time stamp).
 */
const TIMESTAMP = /^([1-9]\d{3})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `value` is an RFC 3339 date-time on a real calendar day (as validator.js's `strict` requires). */
export function isPlainTimestamp(value: string): boolean {
  const match = TIMESTAMP.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1])) return false;
  if (Number(match[4]) > 23 || Number(match[5]) > 59 || Number(match[6]) > 59) return false;
  if (match[7] !== undefined && (Number(match[7]) > 23 || Number(match[8]) > 59)) return false;
  return true;
}

/**
 * `person.name+tag@mail.example.com`: an unquoted ASCII local part of dot-separated atoms (at most
 * 64 characters), and a domain of letter-digit-hyphen labels (at most 63 characters, no hyphen at
 * either end) ending in an alphabetic top-level label; at most 254 characters in all.
 */
const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/** Whether `value` is such an address (which validator.js's `isEmail` with its default options accepts). */
export function isPlainEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value) && value.indexOf('@') <= 64;
}
