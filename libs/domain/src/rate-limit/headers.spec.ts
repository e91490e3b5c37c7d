import fc from 'fast-check';
import { rateLimitHeaders } from './headers';
import { TokenBucketLimiter } from './token-bucket';

// RFC 9651 item: a String policy name, then ;key=Integer parameters.
const ITEM = /^"default"(;[a-z]+=\d{1,15})+$/;

describe('rateLimitHeaders', () => {
  const opts = { ratePerSecond: 100, burst: 200 };

  it('describes the policy and the state of an allowed request, without Retry-After', () => {
    const headers = rateLimitHeaders({ allowed: true, limit: 200, remaining: 150, retryAfterSeconds: 0, resetSeconds: 1 }, opts);
    expect(headers).toEqual({
      'RateLimit-Policy': '"default";q=200;w=2',
      RateLimit: '"default";r=150;t=1',
    });
  });

  it('adds Retry-After to a refusal and points t at the same moment', () => {
    const headers = rateLimitHeaders({ allowed: false, limit: 200, remaining: 0, retryAfterSeconds: 3, resetSeconds: 9 }, opts);
    expect(headers).toEqual({
      'RateLimit-Policy': '"default";q=200;w=2',
      RateLimit: '"default";r=0;t=3',
      'Retry-After': '3',
    });
  });

  it('rounds the window up to whole seconds and never below 1', () => {
    const d = { allowed: true, limit: 5, remaining: 4, retryAfterSeconds: 0, resetSeconds: 1 };
    expect(rateLimitHeaders(d, { ratePerSecond: 2, burst: 5 })['RateLimit-Policy']).toBe('"default";q=5;w=3');
    expect(rateLimitHeaders(d, { ratePerSecond: 1000, burst: 5 })['RateLimit-Policy']).toBe('"default";q=5;w=1');
  });

  it('advertises nothing when limiting is off', () => {
    const limiter = new TokenBucketLimiter({ ratePerSecond: 0, burst: 200 });
    expect(rateLimitHeaders(limiter.take('k'), { ratePerSecond: 0, burst: 200 })).toEqual({});
  });

  it('always produces well-formed structured fields for real decisions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 500 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 60 }),
        (rate, burst, gaps) => {
          let t = 0;
          const limiter = new TokenBucketLimiter({ ratePerSecond: rate, burst, now: () => t });
          for (const gap of gaps) {
            t += gap;
            const decision = limiter.take('k');
            const headers = rateLimitHeaders(decision, { ratePerSecond: rate, burst });
            expect(headers['RateLimit-Policy']).toMatch(ITEM);
            expect(headers.RateLimit).toMatch(ITEM);
            expect(headers.RateLimit).toContain(`;r=${decision.remaining};`);
            if (decision.allowed) {
              expect(headers['Retry-After']).toBeUndefined();
            } else {
              expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(1);
              expect(headers.RateLimit.endsWith(`;t=${headers['Retry-After']}`)).toBe(true);
            }
          }
        },
      ),
    );
  });
});
