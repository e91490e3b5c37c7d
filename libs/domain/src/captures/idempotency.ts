import { canonicalDigest } from '../flows/canonical-json';

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
