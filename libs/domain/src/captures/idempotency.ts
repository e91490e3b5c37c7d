import { createHmac } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../flows/canonical-json';

/** Lower-case hex HMAC-SHA-256 of a value's canonical JSON under `secret`. */
const keyedDigest = (secret: string, value: unknown): string => createHmac('sha256', secret).update(canonicalJson(value)).digest('hex');

/** The body field that names the retry; it is the lookup key, so it is not part of what it guards. */
export const IDEMPOTENCY_KEY_FIELD = 'idempotency_key';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Lower-case hex SHA-256 of the canonical JSON of a record request body without its top-level
 * `idempotency_key`. The caller stores it with the record: a retry under the same key with the same
 * fingerprint answers the stored record; a different fingerprint under the same key is a 409
 * (`idempotency_conflict`). Key order does not matter; spelling does (an absent `default_checked` and
 * `false` differ), since a retry resends the same body. Throws (TypeError/RangeError) on non-JSON.
 */
export function recordRequestFingerprint(body: unknown): string {
  if (isPlainObject(body)) {
    const rest: Record<string, unknown> = { ...body };
    delete rest[IDEMPOTENCY_KEY_FIELD];
    return canonicalDigest(rest);
  }
  return canonicalDigest(body);
}

/**
 * How long a capture answers a retry under its `Idempotency-Key`: as long as the gateway keeps an
 * answer (24 hours). After that the key names nothing, there as here.
 */
export const CAPTURE_RETRY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * A capture request sent with an `Idempotency-Key`, as the decisions service sees it: the key named
 * within its scope (the gateway's: the credential, or the path for a frame's render proof) as a
 * digest it stores with the capture, the digest of the body it compares a retry's with, and a secret
 * of the key under which it seals the capture token (it keeps the token only as a hash otherwise, and
 * a retry must answer it again). The secret cannot be computed from the digests and is never stored;
 * only a caller holding the key (and the credential) can have the token answered again.
 */
export interface CaptureRetry {
  key_digest: string;
  request_digest: string;
  secret: string;
}

/**
 * The CaptureRetry of a capture request with `idempotencyKey` in the gateway's `scope`; `body` as the
 * client sent it. `serverSecret` (the country's SUBJECT_REF_KEY) keys the request's digest: a capture's
 * body may name the person (browser commit), and a capture held in a country that is not their home
 * keeps the digest there for a day, where an unkeyed one would give the address back to whoever
 * tries candidate addresses. The key's digest is keyed too (a client's keys may be guessable).
 */
export function captureRetry(scope: string, idempotencyKey: string, body: unknown, serverSecret: string): CaptureRetry {
  return {
    key_digest: keyedDigest(serverSecret, ['dcr capture retry key v2', scope, idempotencyKey]),
    request_digest: keyedDigest(serverSecret, ['dcr capture retry request v2', scope, idempotencyKey, body ?? null]),
    secret: canonicalDigest(['dcr capture retry secret v1', scope, idempotencyKey]),
  };
}
