import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** Sealing format version; a future format gets a new prefix so stored values stay readable. */
const SEAL_VERSION = 'v1';
const KEY_BYTES = 32;
/** 96-bit IVs are GCM's native size; a random one per seal is safe for far more seals than we make. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * A new signing secret: `whsec_` + 32 random bytes as base64url (43 characters). The prefix lets
 * secret scanners and people recognise a leaked value; the HMAC key is the whole string's UTF-8
 * bytes, prefix included, so receivers paste it as shown.
 */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

/**
 * Encrypts a signing secret for storage: the service must sign with it later, so it cannot be hashed
 * like an API token. AES-256-GCM, a fresh IV each time; `v1.<iv>.<ciphertext>.<tag>` in base64url.
 * `associatedData` (for example the subscription id) binds the sealed value to its row, so a value
 * copied onto another row does not open there; pass the same value to openWebhookSecret.
 */
export function sealWebhookSecret(secret: string, key: Buffer, associatedData?: string): string {
  assertKey(key);
  if (typeof secret !== 'string' || secret.length === 0) throw new RangeError('webhook secret must be a non-empty string');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (associatedData !== undefined) cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [SEAL_VERSION, iv, ciphertext, tag].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/**
 * The secret inside a value made by sealWebhookSecret. Throws when the value is malformed, was
 * altered, or the key (or associated data) differs: GCM's tag makes every one of those detectable,
 * and a wrong secret must never be used to sign silently.
 */
export function openWebhookSecret(sealed: string, key: Buffer, associatedData?: string): string {
  assertKey(key);
  const parts = typeof sealed === 'string' ? sealed.split('.') : [];
  if (parts.length !== 4 || parts[0] !== SEAL_VERSION || !parts.slice(1).every((p) => BASE64URL.test(p))) {
    throw new Error('sealed webhook secret is malformed');
  }
  const [iv, ciphertext, tag] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
  // Only the canonical spelling: base64url ignores spare low bits, and an edited value should never
  // open as if it were untouched.
  if ([iv, ciphertext, tag].some((bytes, i) => bytes.toString('base64url') !== parts[i + 1])) {
    throw new Error('sealed webhook secret is malformed');
  }
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES || ciphertext.length === 0) {
    throw new Error('sealed webhook secret is malformed');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    if (associatedData !== undefined) decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    // Node's message ("Unsupported state or unable to authenticate data") does not say what to check.
    throw new Error('sealed webhook secret could not be opened: wrong key or altered value');
  }
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new RangeError(`webhook secret sealing key must be ${KEY_BYTES} bytes`);
  }
}
