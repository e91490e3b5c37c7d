import { APIError, parseRetryAfter, RateLimitError, ServiceConnectionError, ServiceError } from './errors';

export interface BackoffOptions {
  /** Wait before the first retry, in milliseconds (before jitter). */
  initialRetryDelayMs: number;
  /** Longest wait the backoff itself grows to, in milliseconds. */
  maxRetryDelayMs: number;
  /** The longest `Retry-After` the client will wait for; beyond it the error is raised at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialRetryDelayMs: 500,
  maxRetryDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Which failures a call may retry.
 * - `idempotent`: network errors, timeouts, 429 and 5xx. For GETs, DELETEs and for POSTs, which
 *   always carry an `Idempotency-Key`, so a retry of a request that did reach the service gets the
 *   first answer back instead of acting twice.
 * - `unprocessed`: only failures that prove the service did nothing: a 429 (refused before the
 *   handler runs) and a connection that was never made. For a GET with a side effect, such as the
 *   single-use consent token check, where a retry after a lost answer would report `expired`.
 */
export type RetryPolicy = 'idempotent' | 'unprocessed';

/** Connection failures that happen before a request is sent, so nothing was processed. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

export function isRetryable(error: ServiceError, policy: RetryPolicy): boolean {
  if (error instanceof RateLimitError) return true;
  if (policy === 'unprocessed') return error instanceof ServiceConnectionError && NOT_CONNECTED.has(connectionCode(error) ?? '');
  return error instanceof ServiceConnectionError || (error instanceof APIError && (error.statusCode ?? 0) >= 500);
}

/**
 * How long to wait before retry number `retry` (0 for the first), or undefined when the service asked
 * for a longer wait than `maxRetryAfterMs` (the error is then raised rather than retried sooner than
 * asked). Exponential backoff with jitter (a random wait between half and all of
 * `initial * 2^retry`, capped), and never less than `Retry-After`.
 */
export function retryDelay(retry: number, error: ServiceError, options: BackoffOptions, random: () => number = Math.random): number | undefined {
  const exponential = Math.min(options.initialRetryDelayMs * 2 ** retry, options.maxRetryDelayMs);
  const jittered = exponential * (0.5 + random() / 2);
  const retryAfter = error.statusCode === undefined ? undefined : parseRetryAfter(error.headers['retry-after']);
  if (retryAfter === undefined) return Math.round(jittered);
  if (retryAfter > options.maxRetryAfterMs) return undefined;
  return Math.round(Math.max(retryAfter, jittered));
}

/** The system error code (`ECONNREFUSED`, …) behind a failed fetch, which keeps it in `cause`. */
export function connectionCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}
