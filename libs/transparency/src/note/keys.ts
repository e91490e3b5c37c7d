/**
 * Note keys in the text formats of golang.org/x/mod/sumdb/note:
 *   verifier key  <name>+<hex key ID>+<base64(type || 32-byte public key)>
 *   signer key    PRIVATE+KEY+<name>+<hex key ID>+<base64(type || 32-byte seed)>
 */
import { randomBytes } from 'node:crypto';
import { cosignatureV1Verifier } from './cosignature';
import {
  checkKeyName,
  ed25519FromSeed,
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  hex2,
  parseSignerKeyText,
} from './ed25519';
import {
  PRIVATE_KEY_PREFIX,
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  computeKeyId,
  formatKeyText,
  parseKeyText,
} from './encoding';
import { malformed } from './errors';

export interface NoteSigner {
  readonly name: string;
  readonly keyId: Buffer;
  readonly verifierKey: string;
  sign(message: Buffer): Buffer;
}

export interface NoteVerifier {
  readonly name: string;
  readonly keyId: Buffer;
  readonly type: 'ed25519' | 'cosignature/v1';
  /** `message` is the note text; `signature` the bytes after the 4-byte key ID. */
  verify(message: Buffer, signature: Buffer): boolean;
}

/** Generates an Ed25519 (type 0x01) note key pair in the Go text formats. */
export function generateNoteKey(name: string): { signerKey: string; verifierKey: string } {
  const seed = randomBytes(32);
  const signer = noteSignerFromSeed(name, seed);
  const signerKey = PRIVATE_KEY_PREFIX + formatKeyText(name, signer.keyId, SIG_TYPE_ED25519, seed);
  return { signerKey, verifierKey: signer.verifierKey };
}

export function noteSignerFromKey(signerKey: string): NoteSigner {
  const { name, key } = parseSignerKeyText(signerKey, [SIG_TYPE_ED25519]);
  return noteSignerFromSeed(name, key);
}

export function noteSignerFromSeed(name: string, seed: Uint8Array): NoteSigner {
  checkKeyName(name);
  const { privateKey, publicKey } = ed25519FromSeed(seed);
  const keyId = computeKeyId(name, SIG_TYPE_ED25519, publicKey);
  return {
    name,
    keyId,
    verifierKey: formatKeyText(name, keyId, SIG_TYPE_ED25519, publicKey),
    sign: (message) => ed25519Sign(privateKey, message),
  };
}

/**
 * Parses a verifier key of type 0x01 (Ed25519 note signatures) or 0x04 (Ed25519 cosignature/v1,
 * c2sp.org/tlog-cosignature). The key ID in the text must match the one computed from the key.
 */
export function parseVerifierKey(verifierKey: string): NoteVerifier {
  const { name, keyId, type, key } = parseKeyText(verifierKey, 'verifier key');
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1) {
    throw malformed(`verifier key: unsupported type 0x${hex2(type)}`);
  }
  if (key.length !== 32) throw malformed('verifier key: Ed25519 key must be 32 bytes');
  if (!computeKeyId(name, type, key).equals(keyId)) throw malformed('verifier key: key id does not match the key');
  return type === SIG_TYPE_ED25519 ? ed25519Verifier(name, key) : cosignatureV1Verifier(name, key);
}

export function ed25519Verifier(name: string, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name);
  const keyObject = ed25519PublicKey(publicKey);
  return {
    name,
    keyId: computeKeyId(name, SIG_TYPE_ED25519, publicKey),
    type: 'ed25519',
    verify: (message, signature) => ed25519Verify(keyObject, message, signature),
  };
}
