import { randomString, ID_ALPHABET } from './random';

const queue: number[][] = [];
jest.mock('node:crypto', () => {
  const actual = jest.requireActual('node:crypto');
  return {
    ...actual,
    randomBytes: (n: number) => {
      const next = queue.shift();
      return next ? Buffer.from(next) : actual.randomBytes(n);
    },
  };
});

describe('randomString', () => {
  afterEach(() => (queue.length = 0));

  it('discards bytes that would bias the modulo and maps the rest uniformly', () => {
    // 36 symbols: bytes 252..255 must be rejected (they would make 0-3 more likely).
    queue.push([252, 253, 254, 255, 0, 35, 251, 36]);
    expect(randomString(4)).toBe('0zz0'); // 0→'0', 35→'z', 251 % 36 = 35→'z', 36 % 36 = 0→'0'
  });

  it('asks for more bytes when too many were rejected', () => {
    queue.push([255, 255, 255, 255, 255, 255, 255, 1]);
    queue.push([2, 3]);
    expect(randomString(3)).toBe('123');
  });

  it('refuses a non-positive length', () => {
    expect(() => randomString(0)).toThrow(RangeError);
    expect(() => randomString(1.5)).toThrow(RangeError);
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
