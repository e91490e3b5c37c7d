import { nextRandomByte, prefixedRandomString, randomString, ID_ALPHABET } from './random';

/** A byte source that plays back a fixed sequence. */
const bytes = (...values: number[]) => () => {
  const next = values.shift();
  if (next === undefined) throw new Error('byte sequence exhausted');
  return next;
};

describe('randomString', () => {
  it('discards bytes that would bias the modulo and maps the rest uniformly', () => {
    // 36 symbols: bytes 252..255 must be rejected (they would make 0-3 more likely).
    expect(randomString(4, ID_ALPHABET, bytes(252, 253, 254, 255, 0, 35, 251, 36))).toBe('0zz0'); // 0→'0', 35→'z', 251 % 36 = 35→'z', 36 % 36 = 0→'0'
  });

  it('keeps drawing bytes while too many are rejected', () => {
    expect(randomString(3, ID_ALPHABET, bytes(255, 255, 255, 255, 255, 255, 255, 1, 2, 3))).toBe('123');
  });

  it('serves crypto bytes from a pool that refills itself', () => {
    const drawn = Array.from({ length: 10000 }, () => nextRandomByte());
    expect(new Set(drawn).size).toBeGreaterThan(250);
    expect(drawn.every((b) => Number.isInteger(b) && b >= 0 && b < 256)).toBe(true);
  });

  it('refuses a non-positive length', () => {
    expect(() => randomString(0)).toThrow(RangeError);
    expect(() => randomString(1.5)).toThrow(RangeError);
  });
});

describe('prefixedRandomString', () => {
  it('puts the prefix before the drawn characters, which follow the same rules', () => {
    expect(prefixedRandomString('req_', 4, ID_ALPHABET, bytes(252, 0, 35, 251, 36))).toBe('req_0zz0');
    expect(prefixedRandomString('', 2, 'ab', bytes(0, 1))).toBe('ab');
  });

  it('makes ids longer than one call of String.fromCharCode takes, in order', () => {
    let i = 0;
    const id = prefixedRandomString('x_', 2500, ID_ALPHABET, () => i++ % 36);
    expect(id).toHaveLength(2502);
    expect(id.startsWith('x_0123456789abcdefghijklmnopqrstuvwxyz0123')).toBe(true);
    expect(id.slice(1026, 1062)).toBe(ID_ALPHABET.slice(16) + ID_ALPHABET.slice(0, 16)); // the 1,024th drawn character, across the call boundary
  });

  it('refuses a non-positive length', () => {
    expect(() => prefixedRandomString('req_', 0)).toThrow(RangeError);
  });
});

describe('randomString distribution (real randomness)', () => {
  it('is close to uniform over [0-9a-z]', () => {
    const sample = randomString(180_000);
    const counts = new Map<string, number>();
    for (const c of sample) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe(ID_ALPHABET);
    const expected = sample.length / 36;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 35 degrees of freedom: p(chi² > 90) is about 1e-6. A modulo-biased generator scores ~1000.
    expect(chiSquare).toBeLessThan(90);
  });
});
