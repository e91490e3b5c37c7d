/**
 * Ed25519 through node:crypto. Keys travel as raw 32-byte seeds / public keys (RFC 8032); node
 * wants DER, so the raw forms are wrapped in the fixed PKCS#8 / SPKI prefixes for Ed25519.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { PRIVATE_KEY_PREFIX, computeKeyId, isValidKeyName, parseKeyText, type KeyText } from './encoding';
import { malformed } from './errors';

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
export const ED25519_SIGNATURE_SIZE = 64;

/** An Ed25519 key pair from its RFC 8032 32-byte seed (the form Go stores in signer keys). */
export function ed25519FromSeed(seed: Uint8Array): { privateKey: KeyObject; publicKey: Buffer } {
  if (seed.length !== 32) throw malformed('Ed25519 seed must be 32 bytes');
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return { privateKey, publicKey: Buffer.from(spki.subarray(SPKI_ED25519_PREFIX.length)) };
}

export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw malformed('Ed25519 public key must be 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
}

export function ed25519Sign(privateKey: KeyObject, message: Uint8Array): Buffer {
  return sign(null, message, privateKey);
}

export function ed25519Verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  return signature.length === ED25519_SIGNATURE_SIZE && verify(null, message, publicKey, signature);
}

export function checkKeyName(name: string): void {
  if (!isValidKeyName(name)) throw malformed(`invalid key name ${JSON.stringify(name)}`);
}

/** Parses `PRIVATE+KEY+<name>+<id>+<key>` with a 32-byte seed and checks the key ID against it. */
export function parseSignerKeyText(
  signerKey: string,
  allowedTypes: readonly number[],
): KeyText & { privateKey: KeyObject; publicKey: Buffer } {
  if (!signerKey.startsWith(PRIVATE_KEY_PREFIX)) throw malformed('signer key must start with PRIVATE+KEY+');
  const parsed = parseKeyText(signerKey.slice(PRIVATE_KEY_PREFIX.length), 'signer key');
  if (!allowedTypes.includes(parsed.type)) throw malformed(`signer key: unsupported type 0x${hex2(parsed.type)}`);
  if (parsed.key.length !== 32) throw malformed('signer key: seed must be 32 bytes');
  const { privateKey, publicKey } = ed25519FromSeed(parsed.key);
  // The text carries the *public* key's ID; it can only be checked after deriving the public key.
  if (!computeKeyId(parsed.name, parsed.type, publicKey).equals(parsed.keyId)) {
    throw malformed('signer key: key id does not match the key');
  }
  return { ...parsed, privateKey, publicKey };
}

export function hex2(n: number): string {
  return n.toString(16).padStart(2, '0');
}

