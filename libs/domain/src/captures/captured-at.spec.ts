import { importDecisionOrder, isZonedDateTime } from './captured-at';

describe('isZonedDateTime', () => {
  it.each(['2026-10-01T10:00:00Z', '2026-10-01T10:00:00.123Z', '2026-10-01T10:00:00.123456789Z', '2026-10-01T10:00Z', '2026-10-01T10:00:00+02:00', '2026-10-01T10:00:00-05:30', '2024-02-29T23:59:59Z', '0001-01-01T00:00:00Z'])(
    'takes %s',
    (value) => expect(isZonedDateTime(value)).toBe(true),
  );

  it.each(['2026-10-01', '2026-10-01T10:00:00', '2026-10-01 10:00:00Z', '2026-02-29T10:00:00Z', '2026-02-30T10:00:00Z', '2026-13-01T10:00:00Z', '2026-10-01T24:00:00Z', '2026-10-01T10:00:00+2:00', '0000-06-01T10:00:00Z', '0001-01-01T00:30:00+01:00', 20261001, null])(
    'refuses %s',
    (value) => expect(isZonedDateTime(value)).toBe(false),
  );
});

describe('importDecisionOrder', () => {
  it('decides rows in the order they were captured, ties and refused times in row order', () => {
    const row = (captured_at: unknown) => ({ subject: { email: 'ada@example.com' }, captured_at });
    const rows = [
      row('2022-06-01T12:00:00Z'),
      row('2021-06-01T12:00:00Z'),
      row('2021-06-01T14:00:00+02:00'), // the same moment as the row before it
      row('last tuesday'),
      row('2019-06-01T12:00:00.5Z'),
      null,
      row('2019-06-01T12:00:00.123456789Z'),
    ];
    expect(importDecisionOrder(rows)).toEqual([3, 5, 6, 4, 1, 2, 0]);
    expect(importDecisionOrder([])).toEqual([]);
  });
});
