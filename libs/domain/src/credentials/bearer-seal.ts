import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A value kept beside a bearer credential that only the credential's holder can read: sealed with
 * AES-256-GCM under a key derived from the credential itself (HKDF-SHA256), while the service keeps
 * the credential only as a hash (hashCredential). So a row holding a sealed value reveals nothing
 * without the credential, which only the person's browser or client has. The inbox keeps the
 * signed-in address so (an address of a person homed in another country is then kept nowhere
 * here in a form the service can read: docs/architecture.md, Residency).
 *
 * Sealed form: `v1.<base64url(12-byte nonce ‖ ciphertext ‖ 16-byte tag)>`. `purpose` separates the
 * keys of values sealed for different uses under the same credential.
 */
const SEAL_VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

function keyOf(credential: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(credential, 'utf8'), Buffer.from('dcr.bearer-seal.v1', 'utf8'), Buffer.from(purpose, 'utf8'), 32));
}

export function sealForBearer(credential: string, purpose: string, value: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(credential, purpose), nonce);
  const sealed = Buffer.concat([nonce, cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEAL_VERSION}.${sealed.toString('base64url')}`;
}

/** The value sealed for `credential` and `purpose`, or undefined when it was sealed for another (or altered). */
export function unsealWithBearer(credential: string, purpose: string, sealed: string): string | undefined {
  const [version, body, ...rest] = sealed.split('.');
  if (version !== SEAL_VERSION || body === undefined || rest.length > 0) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length < NONCE_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(credential, purpose), bytes.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
