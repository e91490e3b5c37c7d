/** The specification's waits between attempts; `WEBHOOK_RETRY_WAITS` overrides them so tests can shorten them. */
export const DEFAULT_WEBHOOK_RETRY_WAITS = '30s,2m,15m,1h';

/** Attempts per delivery, the first included (specification, Limits). */
export const WEBHOOK_MAX_ATTEMPTS = 5;

/** The longest wait a timer can hold (setTimeout's signed 32-bit limit, about 24.8 days). */
export const MAX_WEBHOOK_RETRY_WAIT_MS = 2 ** 31 - 1;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d+)(ms|s|m|h)$/;

/**
 * The waits of a `WEBHOOK_RETRY_WAITS` value in milliseconds: comma-separated durations `500ms`,
 * `30s`, `2m`, `1h` (whole numbers, lower-case units, spaces around items allowed), exactly one per
 * retry. A wrong value is a configuration mistake and throws a RangeError that names it, so the
 * service refuses to boot instead of retrying on a schedule nobody chose.
 */
export function parseRetryWaits(text: string): number[] {
  const expected = WEBHOOK_MAX_ATTEMPTS - 1;
  if (typeof text !== 'string') throw new RangeError('WEBHOOK_RETRY_WAITS must be a string');
  const items = text.split(',').map((item) => item.trim());
  if (items.length !== expected) {
    const got = text.trim() === '' ? 0 : items.length;
    throw new RangeError(
      `WEBHOOK_RETRY_WAITS must list exactly ${expected} waits (one per retry after the first attempt), got ${got}: "${text}"`,
    );
  }
  return items.map((item, index) => {
    const match = DURATION.exec(item);
    if (!match) {
      throw new RangeError(
        `WEBHOOK_RETRY_WAITS item ${index + 1} "${item}" is not a duration such as 500ms, 30s, 2m or 1h`,
      );
    }
    const ms = Number(match[1]) * UNIT_MS[match[2]];
    if (!(ms <= MAX_WEBHOOK_RETRY_WAIT_MS)) {
      throw new RangeError(`WEBHOOK_RETRY_WAITS item ${index + 1} "${item}" is longer than ${MAX_WEBHOOK_RETRY_WAIT_MS} ms`);
    }
    return ms;
  });
}

/** What one delivery attempt came back with. */
export type AttemptOutcome =
  | { kind: 'success'; status: number }
  | { kind: 'http_error'; status: number }
  | { kind: 'timeout'; phase: 'connect' | 'read' }
  | { kind: 'network_error'; code: string };

/** How an attempt counts: done, worth another attempt, or final. */
export type AttemptVerdict = 'succeeded' | 'retryable' | 'permanent_failure';

/**
 * Classifies an attempt by what the receiver did, not by the `kind` label: the status decides
 * (2xx success; 5xx retryable; 1xx, 3xx, 4xx permanent, 429 and 408 included, because the
 * specification makes every 4xx a permanent failure and redirects are never followed). A timeout
 * or network error never reached a verdict of the receiver, so it is retryable, but for an address
 * the service refuses to reach (FORBIDDEN_ADDRESS_ERROR), which fails at once.
 */
/** The network error of a delivery refused because its address is private or loopback (never sent). */
export const FORBIDDEN_ADDRESS_ERROR = 'EFORBIDDENADDRESS';

export function classifyAttempt(outcome: AttemptOutcome): AttemptVerdict {
  switch (outcome.kind) {
    case 'success':
    case 'http_error': {
      const { status } = outcome;
      if (!Number.isInteger(status) || status < 100 || status > 999) {
        throw new RangeError(`HTTP status must be a three-digit integer, got ${String(status)}`);
      }
      if (status >= 200 && status <= 299) return 'succeeded';
      if (status >= 500 && status <= 599) return 'retryable';
      return 'permanent_failure';
    }
    case 'timeout':
      return 'retryable';
    case 'network_error':
      // An address a delivery may not reach (private, loopback: FORBIDDEN_ADDRESS_ERROR) is refused
      // by the service, not failed by the receiver: trying again would only be refused again.
      return outcome.code === FORBIDDEN_ADDRESS_ERROR ? 'permanent_failure' : 'retryable';
    default:
      throw new RangeError(`unknown attempt outcome ${JSON.stringify(outcome)}`);
  }
}

/**
 * What happens after attempt number `attempt` (1-based): `'succeeded'`, `{retryAt}` (now +
 * `waits[attempt - 1]`) or `'failed'`. The number of attempts is `waits.length + 1`, so a shortened
 * test schedule still makes WEBHOOK_MAX_ATTEMPTS attempts when it has the right length; an attempt
 * past the last one (a worker that lost count) fails rather than retrying forever.
 */
export function nextStep(
  outcome: AttemptOutcome,
  attempt: number,
  waits: readonly number[],
  now: Date,
): 'succeeded' | 'failed' | { retryAt: Date } {
  if (!Number.isSafeInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be a whole number from 1, got ${String(attempt)}`);
  }
  const verdict = classifyAttempt(outcome);
  if (verdict === 'succeeded') return 'succeeded';
  if (verdict === 'permanent_failure' || attempt > waits.length) return 'failed';
  const wait = waits[attempt - 1];
  if (!Number.isFinite(wait) || wait < 0) throw new RangeError(`retry wait ${attempt} must be a non-negative number of ms`);
  return { retryAt: new Date(now.getTime() + wait) };
}
