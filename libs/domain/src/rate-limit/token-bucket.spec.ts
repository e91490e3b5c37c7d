import fc from 'fast-check';
import { TokenBucketLimiter } from './token-bucket';

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (ms: number) => (t = ms) };
}

const rate = fc.oneof(fc.integer({ min: 1, max: 500 }), fc.constantFrom(0.5, 1.5, 2.5, 7.25));
const burst = fc.integer({ min: 1, max: 40 });
const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })), {
  minLength: 1,
  maxLength: 150,
});

describe('TokenBucketLimiter', () => {
  it('allows a full burst at once, then refuses with a whole-second Retry-After', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 2, burst: 3, now: c.now });
    expect(limiter.take('tp_a')).toEqual({ allowed: true, limit: 3, remaining: 2, retryAfterSeconds: 0, resetSeconds: 1 });
    expect(limiter.take('tp_a').remaining).toBe(1);
    expect(limiter.take('tp_a')).toEqual({ allowed: true, limit: 3, remaining: 0, retryAfterSeconds: 0, resetSeconds: 2 });
    // Half a second to the next token, reported as 1 s; 1.5 s until full, reported as 2 s.
    expect(limiter.take('tp_a')).toEqual({ allowed: false, limit: 3, remaining: 0, retryAfterSeconds: 1, resetSeconds: 2 });
  });

  it('refills continuously, not in whole-window steps', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 10, burst: 1, now: c.now });
    expect(limiter.take('k').allowed).toBe(true);
    c.advance(99);
    expect(limiter.take('k').allowed).toBe(false);
    c.advance(1);
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('keeps exact arithmetic across many small refills', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 10, burst: 1, now: c.now });
    limiter.take('k');
    for (let i = 0; i < 9; i++) {
      c.advance(10);
      expect(limiter.take('k').allowed).toBe(false);
    }
    c.advance(10); // ten refills of 0.1 token make exactly one
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('never holds more than a burst, however long a key was idle', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 100, burst: 5, now: c.now });
    limiter.take('k');
    c.advance(3_600_000);
    const results = Array.from({ length: 6 }, () => limiter.take('k').allowed);
    expect(results).toEqual([true, true, true, true, true, false]);
  });

  it('keeps keys apart', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 1, burst: 1, now: c.now });
    expect(limiter.take('tp_a').allowed).toBe(true);
    expect(limiter.take('tp_a').allowed).toBe(false);
    expect(limiter.take('tp_b').allowed).toBe(true);
  });

  it('refills nothing when the clock steps back', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 1, burst: 1, now: c.now });
    limiter.take('k');
    c.advance(-10_000);
    expect(limiter.take('k')).toMatchObject({ allowed: false, retryAfterSeconds: 11 });
    c.advance(10_000);
    expect(limiter.take('k').allowed).toBe(false); // the step back did not bank time
    c.advance(1000);
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('allows everything when the rate is 0 and keeps no state', () => {
    const limiter = new TokenBucketLimiter({ ratePerSecond: 0, burst: 200, now: () => 0 });
    for (let i = 0; i < 10_000; i++) {
      const decision = limiter.take('k');
      if (!decision.allowed || decision.retryAfterSeconds !== 0) throw new Error(`refused request ${i}`);
    }
    expect(limiter.size).toBe(0);
  });

  it('bounds memory by dropping the least recently used key', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 0.001, burst: 1, now: c.now, maxKeys: 2 });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('b').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false); // a is now the most recent
    expect(limiter.take('c').allowed).toBe(true); // drops b, the least recently used
    expect(limiter.size).toBe(2);
    expect(limiter.take('a').allowed).toBe(false); // a was kept
    expect(limiter.take('b').allowed).toBe(true); // b was forgotten: a fresh bucket
    expect(limiter.size).toBe(2);
  });

  it('keeps the least-recently-used order when the most recent key is taken again and again', () => {
    const c = clock();
    const limiter = new TokenBucketLimiter({ ratePerSecond: 0.001, burst: 3, now: c.now, maxKeys: 2 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('b'); // b is already the most recent
    limiter.take('a'); // a moves to the most recent end
    limiter.take('a');
    expect(limiter.take('a').remaining).toBe(0); // four takes of a burst of three: the bucket kept its count
    limiter.take('c'); // drops b
    expect(limiter.take('b').remaining).toBe(2); // b was forgotten: a fresh bucket; this drops a, now the oldest
    expect(limiter.take('a').remaining).toBe(2); // a was forgotten too
    expect(limiter.size).toBe(2);
  });

  it('never tracks more than maxKeys keys', () => {
    const limiter = new TokenBucketLimiter({ ratePerSecond: 1, burst: 1, now: () => 0, maxKeys: 50 });
    for (let i = 0; i < 1000; i++) limiter.take(`k${i}`);
    expect(limiter.size).toBe(50);
  });

  it.each([
    [{ ratePerSecond: -1, burst: 1 }],
    [{ ratePerSecond: Number.NaN, burst: 1 }],
    [{ ratePerSecond: Number.POSITIVE_INFINITY, burst: 1 }],
    [{ ratePerSecond: 1, burst: 0 }],
    [{ ratePerSecond: 1, burst: 1.5 }],
    [{ ratePerSecond: 1, burst: 1, maxKeys: 0 }],
  ])('refuses the options %j', (opts) => {
    expect(() => new TokenBucketLimiter(opts)).toThrow(RangeError);
  });

  describe('properties', () => {
    it('never allows more than burst + rate × elapsed requests in any window', () => {
      fc.assert(
        fc.property(rate, burst, gaps, (r, b, steps) => {
          const c = clock(0);
          const limiter = new TokenBucketLimiter({ ratePerSecond: r, burst: b, now: c.now });
          const allowedAt: number[] = [];
          for (const gap of steps) {
            c.advance(gap);
            if (limiter.take('k').allowed) allowedAt.push(c.now());
          }
          for (let i = 0; i < allowedAt.length; i++) {
            for (let j = i; j < allowedAt.length; j++) {
              const count = j - i + 1; // allowed requests with a time in [allowedAt[i], allowedAt[j]]
              const bound = b + (r * (allowedAt[j] - allowedAt[i])) / 1000;
              if (count > bound + 1e-9) {
                throw new Error(`${count} requests allowed in ${allowedAt[j] - allowedAt[i]} ms (bound ${bound})`);
              }
            }
          }
        }),
      );
    });

    it('gives every refusal a whole Retry-After ≥ 1 that is exact: one second less is too early, the value itself is enough', () => {
      fc.assert(
        fc.property(rate, burst, gaps, (r, b, steps) => {
          const c = clock(0);
          const limiter = new TokenBucketLimiter({ ratePerSecond: r, burst: b, now: c.now });
          for (const gap of steps) {
            c.advance(gap);
            const decision = limiter.take('k');
            if (decision.allowed) {
              expect(decision.retryAfterSeconds).toBe(0);
              continue;
            }
            expect(Number.isInteger(decision.retryAfterSeconds)).toBe(true);
            expect(decision.retryAfterSeconds).toBeGreaterThanOrEqual(1);
            expect(decision.remaining).toBe(0);
            expect(decision.resetSeconds).toBeGreaterThanOrEqual(decision.retryAfterSeconds);
            // A refused take spends nothing, so probing does not change the answer.
            const start = c.now();
            if (decision.retryAfterSeconds > 1) {
              c.set(start + (decision.retryAfterSeconds - 1) * 1000);
              expect(limiter.take('k').allowed).toBe(false);
            }
            c.set(start + decision.retryAfterSeconds * 1000);
            expect(limiter.take('k').allowed).toBe(true);
          }
        }),
      );
    });

    it('reports remaining as the whole tokens left and never above the limit', () => {
      fc.assert(
        fc.property(rate, burst, gaps, (r, b, steps) => {
          const c = clock(0);
          const limiter = new TokenBucketLimiter({ ratePerSecond: r, burst: b, now: c.now });
          for (const gap of steps) {
            c.advance(gap);
            const d = limiter.take('k');
            expect(d.limit).toBe(b);
            expect(Number.isInteger(d.remaining) && d.remaining >= 0 && d.remaining < b).toBe(true);
            expect(Number.isInteger(d.resetSeconds)).toBe(true);
            expect(d.resetSeconds).toBeLessThanOrEqual(Math.ceil(b / r));
          }
        }),
      );
    });
  });
});
