import * as fc from 'fast-check';
import isEmail from 'validator/lib/isEmail';
import isISO8601 from 'validator/lib/isISO8601';
import { isPlainEmail, isPlainTimestamp } from './quick-accepts';

const digits = (n: number) => fc.stringMatching(new RegExp(`^\\d{${n}}$`));
const pick = <T>(...values: T[]) => fc.constantFrom(...values);

/** Strings shaped like time stamps, most of them near misses: any digits in every field, odd separators and zones. */
const timestampLike = fc
  .tuple(
    digits(4),
    digits(2),
    digits(2),
    pick('T', 't', ' ', ''),
    digits(2),
    digits(2),
    digits(2),
    pick('', '.5', '.123', '.123456789', '.1234567890', ',5', '.'),
    pick('Z', 'z', '', '+00:00', '-05:30', '+24:00', '+0100', '+01', '+01:60'),
    pick(':', ''),
  )
  .map(([y, mo, d, t, h, mi, s, frac, zone, sep]) => `${y}-${mo}-${d}${t}${h}${sep}${mi}${sep}${s}${frac}${zone}`);

/** Addresses built from pieces that validator.js treats differently: dots, quotes, hyphens, digits, long labels. */
const label = fc.oneof(fc.stringMatching(/^[a-zA-Z0-9-]{1,8}$/), pick('a'.repeat(63), 'a'.repeat(64), 'xn--bcher-kva', '123', '_x', 'ü'));
const emailLike = fc
  .tuple(
    fc.oneof(fc.stringMatching(/^[a-zA-Z0-9._+!#-]{0,10}$/), pick('"quoted"', 'a'.repeat(64), 'a'.repeat(65), 'a..b', '.a', 'a.', 'ü', 'a b')),
    pick('@', '@@', ''),
    fc.array(label, { minLength: 1, maxLength: 4 }),
  )
  .map(([local, at, labels]) => `${local}${at}${labels.join('.')}`);

describe('quick acceptances', () => {
  it('accept no time stamp that validator.js refuses, strict or with a strict separator', () => {
    fc.assert(
      fc.property(fc.oneof(timestampLike, fc.string()), (value) => {
        if (isPlainTimestamp(value)) {
          expect(isISO8601(value, { strict: true })).toBe(true);
          expect(isISO8601(value, { strict: true, strictSeparator: true })).toBe(true);
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it('accept what Date writes, with offsets and fractions, and refuse days the calendar does not have', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (date) => {
        expect(isPlainTimestamp(date.toISOString())).toBe(true);
      }),
    );
    expect(isPlainTimestamp('2026-11-24T13:23:29+02:00')).toBe(true);
    expect(isPlainTimestamp('2026-11-24T13:23:29.123456789-05:30')).toBe(true);
    expect(isPlainTimestamp('2024-02-29T00:00:00Z')).toBe(true);
    for (const refused of ['0050-01-01T00:00:00Z', '2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-11-24T24:00:00Z', '2026-11-24T13:60:00Z', '2026-11-24 13:23:29Z', '2026-11-24T13:23:29', '2026-11-24']) {
      expect(isPlainTimestamp(refused)).toBe(false);
    }
  });

  it('accept no address that validator.js refuses with its default options', () => {
    fc.assert(
      fc.property(fc.oneof(emailLike, fc.string()), (value) => {
        if (isPlainEmail(value)) expect(isEmail(value)).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('accept the plain addresses people have, and leave the rest to validator.js', () => {
    for (const plain of ['person-1-2@example.com', 'First.Last+tag@Mail.Example.CO.uk', "o'brien@example.org", `${'a'.repeat(64)}@example.com`]) {
      expect(isPlainEmail(plain)).toBe(true);
    }
    for (const left of ['"quoted"@example.com', 'a..b@example.com', `${'a'.repeat(65)}@example.com`, 'a@example', 'a@example.c0m', 'a@-example.com', 'a@xn--bcher-kva.xn--p1ai', 'ü@example.com']) {
      expect(isPlainEmail(left)).toBe(false);
    }
  });
});
