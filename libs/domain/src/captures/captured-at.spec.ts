import { isZonedDateTime } from './captured-at';

describe('isZonedDateTime', () => {
  it.each(['2026-10-01T10:00:00Z', '2026-10-01T10:00:00.123Z', '2026-10-01T10:00:00.123456789Z', '2026-10-01T10:00Z', '2026-10-01T10:00:00+02:00', '2026-10-01T10:00:00-05:30', '2024-02-29T23:59:59Z'])(
    'takes %s',
    (value) => expect(isZonedDateTime(value)).toBe(true),
  );

  it.each(['2026-10-01', '2026-10-01T10:00:00', '2026-10-01 10:00:00Z', '2026-02-29T10:00:00Z', '2026-02-30T10:00:00Z', '2026-13-01T10:00:00Z', '2026-10-01T24:00:00Z', '2026-10-01T10:00:00+2:00', 20261001, null])(
    'refuses %s',
    (value) => expect(isZonedDateTime(value)).toBe(false),
  );
});
