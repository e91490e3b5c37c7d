import fc from 'fast-check';
import { APIError, ConflictError, errorFromResponse, InvalidRequestError, parseRetryAfter, RateLimitError, ServiceConnectionError, ServiceError, ServiceTimeoutError } from './errors';
import { connectionCode, DEFAULT_BACKOFF, isRetryable, retryDelay } from './retry';

const answer = (statusCode: number, headers: Record<string, string> = {}) =>
  errorFromResponse({ statusCode, body: { message: 'x', code: 'x', request_id: 'req_1' }, rawBody: '{}', headers });

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
  });

  it('reads an HTTP date as the time left until it, never negative', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, null, '', '-5', 'soon', '1e3', '12:00']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('retryDelay', () => {
  const error = answer(503);

  it('doubles from the initial delay, with jitter between half and all of it, up to the cap', () => {
    const low = (retry: number) => retryDelay(retry, error, DEFAULT_BACKOFF, () => 0);
    const high = (retry: number) => retryDelay(retry, error, DEFAULT_BACKOFF, () => 0.999999);
    expect([0, 1, 2, 3, 4, 5, 6].map(low)).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
    expect([0, 1, 2, 3, 4, 5, 6].map(high)).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('never waits less than Retry-After, and gives up on one longer than maxRetryAfter', () => {
    expect(retryDelay(0, answer(429, { 'retry-after': '3' }), DEFAULT_BACKOFF, () => 0.5)).toBe(3000);
    expect(retryDelay(4, answer(429, { 'retry-after': '1' }), DEFAULT_BACKOFF, () => 0.999999)).toBe(8000);
    expect(retryDelay(0, answer(503, { 'retry-after': '60' }), DEFAULT_BACKOFF, () => 0)).toBe(60_000);
    expect(retryDelay(0, answer(503, { 'retry-after': '61' }), DEFAULT_BACKOFF, () => 0)).toBeUndefined();
  });

  it('stays within [max(Retry-After, backoff / 2), max(Retry-After, backoff)] for any input', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.option(fc.nat(60), { nil: undefined }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (retry, after, random) => {
        const headers: Record<string, string> = after === undefined ? {} : { 'retry-after': String(after) };
        const wait = retryDelay(retry, answer(429, headers), DEFAULT_BACKOFF, () => random)!;
        const backoff = Math.min(DEFAULT_BACKOFF.initialRetryDelayMs * 2 ** retry, DEFAULT_BACKOFF.maxRetryDelayMs);
        const floor = (after ?? 0) * 1000;
        expect(wait).toBeGreaterThanOrEqual(Math.max(floor, Math.floor(backoff / 2)));
        expect(wait).toBeLessThanOrEqual(Math.max(floor, backoff));
      }),
    );
  });
});

describe('isRetryable', () => {
  const refused = new ServiceConnectionError('no', { cause: Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }) });
  const reset = new ServiceConnectionError('no', { cause: Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }) });

  it('retries network errors, timeouts, 429 and 5xx, and nothing else', () => {
    const cases: Array<[ServiceError, boolean]> = [
      [refused, true],
      [reset, true],
      [new ServiceTimeoutError(100), true],
      [answer(429), true],
      [answer(500), true],
      [answer(502), true],
      [answer(503), true],
      [answer(504), true],
      [answer(400), false],
      [answer(401), false],
      [answer(403), false],
      [answer(404), false],
      [answer(409), false],
      [answer(410), false],
      [answer(421), false],
      [answer(422), false],
    ];
    for (const [error, expected] of cases) expect([error.statusCode ?? error.code, isRetryable(error, 'idempotent')]).toEqual([error.statusCode ?? error.code, expected]);
  });

  it('for calls that must not run twice, retries only what provably did nothing: 429 and a refused connection', () => {
    expect(isRetryable(answer(429), 'unprocessed')).toBe(true);
    expect(isRetryable(refused, 'unprocessed')).toBe(true);
    expect(isRetryable(reset, 'unprocessed')).toBe(false);
    expect(isRetryable(new ServiceTimeoutError(100), 'unprocessed')).toBe(false);
    expect(isRetryable(answer(503), 'unprocessed')).toBe(false);
    expect(isRetryable(answer(500), 'unprocessed')).toBe(false);
  });

  it('finds the system error code in the cause chain', () => {
    expect(connectionCode(refused)).toBe('ECONNREFUSED');
    expect(connectionCode(new Error('plain'))).toBeUndefined();
  });

  it('classes by status', () => {
    expect(answer(429)).toBeInstanceOf(RateLimitError);
    expect(answer(503)).toBeInstanceOf(APIError);
    expect(answer(409)).toBeInstanceOf(ConflictError);
    expect(answer(418)).toBeInstanceOf(InvalidRequestError);
  });
});
