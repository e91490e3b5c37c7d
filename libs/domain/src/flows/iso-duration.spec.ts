import fc from 'fast-check';
import { addIsoDuration, formatIsoDuration, IsoDuration, isZeroDuration, parseIsoDuration } from './iso-duration';

const zero: IsoDuration = { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };

describe('parseIsoDuration', () => {
  it.each<[string, Partial<IsoDuration>]>([
    ['P1Y', { years: 1 }],
    ['P6M', { months: 6 }],
    ['P30D', { days: 30 }],
    ['P2W', { weeks: 2 }],
    ['PT12H', { hours: 12 }],
    ['PT90M', { minutes: 90 }],
    ['PT45S', { seconds: 45 }],
    ['P1Y2M3DT4H5M6S', { years: 1, months: 2, days: 3, hours: 4, minutes: 5, seconds: 6 }],
    ['P1W2D', { weeks: 1, days: 2 }],
    ['PT0S', {}],
    ['P0D', {}],
  ])('%s', (text, parts) => {
    expect(parseIsoDuration(text)).toEqual({ ...zero, ...parts });
  });

  it.each(['', 'P', 'PT', 'P1DT', '1Y', 'p1y', 'P1y', 'P-1Y', 'P+1Y', 'P1.5Y', 'PT0.5S', 'P1M1Y', 'PT1H1D', 'P1H', 'PT1W', ' P1Y', 'P1Y ', 'P2024-01-01', 'P1234567890D', 'R5/P1Y'])(
    'refuses %j',
    (text) => expect(parseIsoDuration(text)).toBeNull(),
  );

  it('refuses non-strings', () => {
    for (const value of [null, undefined, 1, ['P1Y'], {}]) expect(parseIsoDuration(value)).toBeNull();
  });

  it('round-trips through formatIsoDuration', () => {
    const part = fc.nat({ max: 999 });
    fc.assert(
      fc.property(fc.record({ years: part, months: part, weeks: part, days: part, hours: part, minutes: part, seconds: part }), (d) => {
        expect(parseIsoDuration(formatIsoDuration(d))).toEqual(d);
      }),
    );
    expect(formatIsoDuration(zero)).toBe('PT0S');
    expect(formatIsoDuration({ ...zero, years: 1, minutes: 5 })).toBe('P1YT5M');
    expect(isZeroDuration(parseIsoDuration('P0Y0M')!)).toBe(true);
    expect(isZeroDuration(parseIsoDuration('PT1S')!)).toBe(false);
  });
});

describe('addIsoDuration', () => {
  const at = (iso: string) => new Date(iso);
  it.each([
    ['2024-03-15T10:00:00.000Z', 'P1Y', '2025-03-15T10:00:00.000Z'],
    ['2024-01-31T00:00:00.000Z', 'P1M', '2024-02-29T00:00:00.000Z'],
    ['2023-01-31T00:00:00.000Z', 'P1M', '2023-02-28T00:00:00.000Z'],
    ['2024-02-29T12:00:00.000Z', 'P1Y', '2025-02-28T12:00:00.000Z'],
    ['2024-11-30T00:00:00.000Z', 'P3M', '2025-02-28T00:00:00.000Z'],
    ['2024-01-01T00:00:00.000Z', 'P30D', '2024-01-31T00:00:00.000Z'],
    ['2024-01-01T00:00:00.000Z', 'P2W', '2024-01-15T00:00:00.000Z'],
    ['2024-01-01T20:00:00.000Z', 'PT12H', '2024-01-02T08:00:00.000Z'],
    ['2024-01-01T00:00:00.000Z', 'P1Y2M3DT4H5M6S', '2025-03-04T04:05:06.000Z'],
    ['2024-01-01T00:00:00.123Z', 'PT0S', '2024-01-01T00:00:00.123Z'],
  ])('%s + %s = %s', (start, duration, expected) => {
    expect(addIsoDuration(at(start), parseIsoDuration(duration)!).toISOString()).toBe(expected);
  });

  it('does not mutate the start and refuses invalid dates', () => {
    const start = at('2024-01-01T00:00:00.000Z');
    addIsoDuration(start, parseIsoDuration('P1Y')!);
    expect(start.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(() => addIsoDuration(new Date(Number.NaN), parseIsoDuration('P1Y')!)).toThrow(RangeError);
    expect(() => addIsoDuration(start, parseIsoDuration('P999999999Y')!)).toThrow(RangeError);
  });

  it('never goes backwards', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.record({ years: fc.nat(50), months: fc.nat(50), weeks: fc.nat(50), days: fc.nat(500), hours: fc.nat(100), minutes: fc.nat(100), seconds: fc.nat(100) }),
        (start, duration) => {
          expect(addIsoDuration(start, duration).getTime()).toBeGreaterThanOrEqual(start.getTime());
        },
      ),
    );
  });
});
