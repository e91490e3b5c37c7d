import fc from 'fast-check';
import {
  AttemptOutcome,
  FORBIDDEN_ADDRESS_ERROR,
  DEFAULT_WEBHOOK_RETRY_WAITS,
  WEBHOOK_MAX_ATTEMPTS,
  classifyAttempt,
  nextStep,
  parseRetryWaits,
} from './retry-schedule';

const now = new Date('2030-01-01T00:00:00.000Z');
const waits = parseRetryWaits(DEFAULT_WEBHOOK_RETRY_WAITS);

const status = (min: number, max: number) => fc.integer({ min, max });
const retryable: fc.Arbitrary<AttemptOutcome> = fc.oneof(
  status(500, 599).map((s) => ({ kind: 'http_error' as const, status: s })),
  fc.constantFrom('connect' as const, 'read' as const).map((phase) => ({ kind: 'timeout' as const, phase })),
  fc.constantFrom('ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN').map((code) => ({ kind: 'network_error' as const, code })),
);
const permanent: fc.Arbitrary<AttemptOutcome> = fc
  .oneof(status(100, 199), status(300, 499), status(600, 999))
  .map((s) => ({ kind: 'http_error' as const, status: s }));
const success: fc.Arbitrary<AttemptOutcome> = status(200, 299).map((s) => ({ kind: 'success' as const, status: s }));

describe('parseRetryWaits', () => {
  it('reads the default schedule of the specification: 30 s, 2 min, 15 min, 1 h', () => {
    expect(waits).toEqual([30_000, 120_000, 900_000, 3_600_000]);
    expect(waits).toHaveLength(WEBHOOK_MAX_ATTEMPTS - 1);
  });

  it('reads every unit and tolerates spaces around items', () => {
    expect(parseRetryWaits('10ms, 1s ,0m,2h')).toEqual([10, 1_000, 0, 7_200_000]);
  });

  it('reads any four durations it printed', () => {
    const unit = fc.constantFrom(['ms', 1], ['s', 1_000], ['m', 60_000], ['h', 3_600_000]);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: 500 }), unit), { minLength: 4, maxLength: 4 }), (items) => {
        const text = items.map(([n, [u]]) => `${n}${u}`).join(',');
        expect(parseRetryWaits(text)).toEqual(items.map(([n, [, ms]]) => n * (ms as number)));
      }),
    );
  });

  it.each([
    ['', /exactly 4 waits.*got 0/],
    ['30s,2m,15m', /exactly 4 waits.*got 3/],
    ['30s,2m,15m,1h,2h', /exactly 4 waits.*got 5/],
    ['30s,2m,15m,1d', /item 4 "1d" is not a duration/],
    ['30,2m,15m,1h', /item 1 "30" is not a duration/],
    ['30s,,15m,1h', /item 2 "" is not a duration/],
    ['30s,-2m,15m,1h', /item 2 "-2m" is not a duration/],
    ['30s,2M,15m,1h', /item 2 "2M" is not a duration/],
    ['30s,1.5m,15m,1h', /item 2 "1.5m" is not a duration/],
    ['30s,2m,15m,1000h', /item 4 "1000h" is longer than/],
  ])('refuses %j naming the problem', (text, message) => {
    expect(() => parseRetryWaits(text)).toThrow(RangeError);
    expect(() => parseRetryWaits(text)).toThrow(message);
  });
});

describe('classifyAttempt', () => {
  it('decides by status: 2xx succeeded, 5xx retryable, anything else permanent', () => {
    expect(classifyAttempt({ kind: 'success', status: 204 })).toBe('succeeded');
    expect(classifyAttempt({ kind: 'http_error', status: 503 })).toBe('retryable');
    expect(classifyAttempt({ kind: 'http_error', status: 429 })).toBe('permanent_failure');
    expect(classifyAttempt({ kind: 'http_error', status: 408 })).toBe('permanent_failure');
    expect(classifyAttempt({ kind: 'http_error', status: 301 })).toBe('permanent_failure');
    expect(classifyAttempt({ kind: 'http_error', status: 101 })).toBe('permanent_failure');
    // A mislabelled outcome is still judged by what the receiver answered.
    expect(classifyAttempt({ kind: 'success', status: 500 })).toBe('retryable');
    expect(classifyAttempt({ kind: 'http_error', status: 200 })).toBe('succeeded');
  });

  it('fails at once a delivery refused for its private or loopback address, and retries other network errors', () => {
    expect(classifyAttempt({ kind: 'network_error', code: FORBIDDEN_ADDRESS_ERROR })).toBe('permanent_failure');
    expect(nextStep({ kind: 'network_error', code: FORBIDDEN_ADDRESS_ERROR }, 1, [1000, 2000], new Date())).toBe('failed');
    expect(classifyAttempt({ kind: 'network_error', code: 'ECONNREFUSED' })).toBe('retryable');
  });

  it.each([0, 99, 1000, 200.5, Number.NaN])('refuses the status %p', (s) => {
    expect(() => classifyAttempt({ kind: 'http_error', status: s })).toThrow(RangeError);
  });
});

describe('nextStep', () => {
  it('walks the default schedule: five attempts, waits of 30 s, 2 min, 15 min, 1 h, then failed', () => {
    const outcome: AttemptOutcome = { kind: 'http_error', status: 500 };
    const retryAts = [1, 2, 3, 4].map((attempt) => nextStep(outcome, attempt, waits, now));
    expect(retryAts).toEqual([
      { retryAt: new Date('2030-01-01T00:00:30.000Z') },
      { retryAt: new Date('2030-01-01T00:02:00.000Z') },
      { retryAt: new Date('2030-01-01T00:15:00.000Z') },
      { retryAt: new Date('2030-01-01T01:00:00.000Z') },
    ]);
    expect(nextStep(outcome, WEBHOOK_MAX_ATTEMPTS, waits, now)).toBe('failed');
  });

  it('succeeds on any 2xx at any attempt', () => {
    fc.assert(
      fc.property(success, fc.integer({ min: 1, max: 10 }), (outcome, attempt) => {
        expect(nextStep(outcome, attempt, waits, now)).toBe('succeeded');
      }),
    );
  });

  it('never retries a 4xx, 1xx or 3xx answer', () => {
    fc.assert(
      fc.property(permanent, fc.integer({ min: 1, max: 10 }), (outcome, attempt) => {
        expect(nextStep(outcome, attempt, waits, now)).toBe('failed');
      }),
    );
  });

  it('retries a 5xx, timeout or network error after waits[attempt - 1] while attempts remain', () => {
    fc.assert(
      fc.property(
        retryable,
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.nat({ max: 10_000_000 }), { minLength: 0, maxLength: 6 }),
        (outcome, attempt, schedule) => {
          const step = nextStep(outcome, attempt, schedule, now);
          if (attempt <= schedule.length) expect(step).toEqual({ retryAt: new Date(now.getTime() + schedule[attempt - 1]) });
          else expect(step).toBe('failed');
        },
      ),
    );
  });

  it('makes at most WEBHOOK_MAX_ATTEMPTS attempts with a schedule of the configured length', () => {
    fc.assert(
      fc.property(fc.array(retryable, { minLength: 10, maxLength: 10 }), (outcomes) => {
        let attempts = 0;
        for (const outcome of outcomes) {
          attempts += 1;
          if (nextStep(outcome, attempts, waits, now) === 'failed') break;
        }
        expect(attempts).toBe(WEBHOOK_MAX_ATTEMPTS);
      }),
    );
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses the attempt number %p', (attempt) => {
    expect(() => nextStep({ kind: 'timeout', phase: 'read' }, attempt, waits, now)).toThrow(RangeError);
  });
});
