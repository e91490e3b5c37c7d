import type { RateLimitDecision } from './token-bucket';

/** The quota policy name used in both fields. */
export const RATE_LIMIT_POLICY = 'default';

/**
 * Response header fields for one limiter decision, following draft-ietf-httpapi-ratelimit-headers-10
 * (September 2025; -11 of May 2026 keeps the same syntax). Both fields are Structured Fields
 * (RFC 9651) whose members are a String naming the policy plus parameters:
 *
 *   RateLimit-Policy: "default";q=<burst>;w=<window>
 *   RateLimit: "default";r=<remaining>;t=<reset>
 *   Retry-After: <seconds>            (only when refused)
 *
 * Token bucket to quota policy: `q` is the bucket size (burst) and `w` the seconds an empty bucket
 * takes to fill, ceil(burst / rate); a client that spends at most q per w never waits. `r` is the
 * whole tokens left, `t` the whole seconds until the bucket is full again, except on a refusal,
 * where `t` equals `Retry-After` as the draft asks ("the reset keyword value SHOULD reference the
 * same point in time as the Retry-After field value").
 *
 * With limiting off (`ratePerSecond` 0) there is no policy to advertise and nothing is returned.
 */
export function rateLimitHeaders(
  decision: RateLimitDecision,
  opts: { ratePerSecond: number; burst: number },
): Record<string, string> {
  if (!(opts.ratePerSecond > 0)) return {};
  const headers: Record<string, string> = {
    'RateLimit-Policy': rateLimitPolicyField(opts),
    RateLimit: rateLimitField(decision),
  };
  if (!decision.allowed) headers['Retry-After'] = retryAfterField(decision);
  return headers;
}

/** The `RateLimit-Policy` value: the same for every decision of one policy (so it can be made once). */
export function rateLimitPolicyField(opts: { ratePerSecond: number; burst: number }): string {
  const window = Math.max(1, Math.ceil(opts.burst / opts.ratePerSecond));
  return `"${RATE_LIMIT_POLICY}";q=${opts.burst};w=${window}`;
}

/** The `RateLimit` value of one decision. */
export function rateLimitField(decision: RateLimitDecision): string {
  const reset = decision.allowed ? decision.resetSeconds : decision.retryAfterSeconds;
  return `"${RATE_LIMIT_POLICY}";r=${nonNegativeInteger(decision.remaining)};t=${nonNegativeInteger(reset)}`;
}

/** The `Retry-After` value of a refusal. */
export function retryAfterField(decision: RateLimitDecision): string {
  return String(Math.max(1, nonNegativeInteger(decision.retryAfterSeconds)));
}

const nonNegativeInteger = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0);
