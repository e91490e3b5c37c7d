import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export type Environment = 'sandbox' | 'production';

/** Bytes of entropy in an API token (the value is these bytes as unpadded base64url: 43 characters). */
export const API_TOKEN_BYTES = 32;
/** Bytes of entropy after the `pk_test_` / `pk_live_` prefix (32 base64url characters). */
export const PUBLISHABLE_KEY_BYTES = 24;

const PUBLISHABLE_KEY_PREFIX: Record<Environment, string> = { sandbox: 'pk_test_', production: 'pk_live_' };
const PUBLISHABLE_KEY_PATTERN = /^pk_(test|live)_[A-Za-z0-9_-]{32}$/;
const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** An API token: 32 random bytes, base64url without padding, no prefix. Shown once, stored as a hash. */
export function generateApiToken(): string {
  return randomBytes(API_TOKEN_BYTES).toString('base64url');
}

/** `pk_test_<32>` for sandbox applications, `pk_live_<32>` for production ones. */
export function generatePublishableKey(environment: Environment): string {
  if (environment !== 'sandbox' && environment !== 'production') {
    throw new TypeError(`environment must be sandbox or production, got ${String(environment)}`);
  }
  return PUBLISHABLE_KEY_PREFIX[environment] + randomBytes(PUBLISHABLE_KEY_BYTES).toString('base64url');
}

/**
 * The environment a publishable key reaches, read from its prefix; undefined when the value is not
 * a well-formed publishable key (prefix plus exactly 32 base64url characters).
 */
export function publishableKeyEnvironment(key: unknown): Environment | undefined {
  if (typeof key !== 'string') return undefined;
  const match = PUBLISHABLE_KEY_PATTERN.exec(key);
  if (!match) return undefined;
  return match[1] === 'test' ? 'sandbox' : 'production';
}

/** How a credential is stored: lower-case hex SHA-256 of its UTF-8 bytes (tokens have 256 bits of entropy, so no salt or KDF is needed). */
export function hashCredential(value: string): string {
  // The one-shot form: no Hash object per call (it is on every authenticated request).
  return hash('sha256', value, 'hex');
}

/**
 * Compares two hex digests in time independent of where they differ. False (never an exception) when
 * either is not even-length hex, is empty, or the lengths differ. Hex case is ignored.
 */
export function constantTimeEqualHex(a: string, b: string): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  if (!HEX_PATTERN.test(a) || !HEX_PATTERN.test(b) || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

export type BearerKind = 'api_token' | 'agent_token' | 'oauth_access_token';

export const AGENT_TOKEN_PREFIX = 'ra_agent_';

/**
 * Which verifier a bearer value goes to. It only routes: nothing here proves the value is genuine.
 * - `ra_agent_…` is an AI agent token;
 * - three non-empty base64url segments whose first decodes to a JSON object with a string `alg` is a
 *   JWT, i.e. an OAuth access token;
 * - anything else is an API token candidate (looked up by its hash).
 */
export function classifyBearer(token: string): BearerKind {
  if (typeof token !== 'string') return 'api_token';
  if (token.startsWith(AGENT_TOKEN_PREFIX)) return 'agent_token';
  return looksLikeJwt(token) ? 'oauth_access_token' : 'api_token';
}

function looksLikeJwt(token: string): boolean {
  if (token.indexOf('.') === -1) return false; // API tokens (base64url) never contain a dot
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((s) => BASE64URL_SEGMENT.test(s))) return false;
  if (segments[0].length % 4 === 1) return false; // not a possible base64 length
  try {
    const header: unknown = JSON.parse(Buffer.from(segments[0], 'base64url').toString('utf8'));
    return (
      typeof header === 'object' &&
      header !== null &&
      !Array.isArray(header) &&
      typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}
