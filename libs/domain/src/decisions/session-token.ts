import { createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * `dts_<cc><30>`: the home country's code starts the opaque part, so any country's gateway can
 * answer a token from elsewhere with `wrong_country` without a directory lookup. Clients must not
 * parse it; the country is not personal data, and it is exactly what that answer discloses anyway.
 *
 * The token is the participant's only credential, so the database keeps only its hash
 * (hashCredential) and a random per-session nonce: the token is HMAC-SHA256 of that nonce under a
 * key derived from SUBJECT_REF_KEY (sessionTokenKey), written as 30 characters of [0-9a-z] (155
 * bits). Whoever holds the key can derive a session's token again from its row (the inbox links
 * the person's pending requests so); the rows alone give no token.
 */
const SESSION_TOKEN = /^dts_([a-z]{2})[0-9a-z]{30}$/;
const COUNTRY = /^[A-Za-z]{2}$/;
/** Characters after `dts_<cc>`: 36^30 is about 2^155. */
const SESSION_TOKEN_CHARS = 30;
/** Bytes of a session's nonce (base64url, 22 characters). */
const SESSION_TOKEN_NONCE_BYTES = 16;

function assertCountry(country: string): void {
  if (!COUNTRY.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
}

/**
 * The key one country derives its session tokens under: HKDF-SHA256 of SUBJECT_REF_KEY with a label
 * of its own (no other key derived from SUBJECT_REF_KEY equals it). Derive it once, not per token.
 */
export function sessionTokenKey(subjectRefKey: string, country: string): Buffer {
  assertCountry(country);
  return Buffer.from(hkdfSync('sha256', subjectRefKey, 'dcr-decisions', `session-token:${country.toLowerCase()}`, 32));
}

/** A new session's nonce: what its row keeps to derive its token from. */
export function newSessionTokenNonce(): string {
  return randomBytes(SESSION_TOKEN_NONCE_BYTES).toString('base64url');
}

/** The token of the session with this nonce: `dts_<cc>` and HMAC-SHA256(key, nonce) in 30 base-36 characters. */
export function sessionTokenFor(key: Uint8Array, country: string, nonce: string): string {
  assertCountry(country);
  if (typeof nonce !== 'string' || nonce.length === 0) throw new RangeError('a session token is derived from a non-empty nonce');
  const mac = createHmac('sha256', key).update(nonce, 'utf8').digest('hex');
  // The 256-bit value modulo 36^30: no character is measurably likelier than another.
  const digits = BigInt(`0x${mac}`).toString(36).padStart(SESSION_TOKEN_CHARS, '0').slice(-SESSION_TOKEN_CHARS);
  return `dts_${country.toLowerCase()}${digits}`;
}

export function isSessionToken(value: unknown): value is string {
  return typeof value === 'string' && SESSION_TOKEN.test(value);
}

/** The home country (`US`) of a well-formed session token; undefined for anything else. */
export function countryOfSessionToken(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  return SESSION_TOKEN.exec(token)?.[1]?.toUpperCase();
}
