/**
 * c2sp.org/tlog-cosignature, Ed25519 cosignature/v1 (signature type 0x04):
 *   signed message  = "cosignature/v1\ntime <unix seconds>\n" || checkpoint body
 *   signature bytes = timestamp (u64 big-endian) || Ed25519 signature (64)
 *   key ID          = SHA-256(name || 0x0A || 0x04 || public key)[:4]
 * The timestamp travels in the signature, so a verifier rebuilds the message from it.
 */
import { randomBytes } from 'node:crypto';
import { parseCheckpoint } from './checkpoint';
import {
  ED25519_SIGNATURE_SIZE,
  checkKeyName,
  ed25519FromSeed,
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  parseSignerKeyText,
} from './ed25519';
import {
  PRIVATE_KEY_PREFIX,
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  computeKeyId,
  formatKeyText,
  isUint,
} from './encoding';
import { malformed } from './errors';
import type { NoteVerifier } from './keys';
import { makeNoteSignature, type NoteSignature } from './signed-note';

export interface Cosigner {
  readonly name: string;
  readonly keyId: Buffer;
  /** `<name>+<key ID>+<base64(0x04 || public key)>`. */
  readonly verifierKey: string;
  /** Cosigns a checkpoint body (note text) at `timestamp` (POSIX seconds). */
  cosign(checkpointBody: string, timestamp: number): NoteSignature;
}

const TIMESTAMP_SIZE = 8;
export const COSIGNATURE_V1_SIZE = TIMESTAMP_SIZE + ED25519_SIGNATURE_SIZE;
const MAX_TIMESTAMP = (1n << 63n) - 1n; // the spec caps the u64 at 2^63-1

/** The exact bytes an Ed25519 cosignature/v1 signs. */
export function cosignatureMessage(checkpointBody: string, timestamp: number | bigint): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timestamp.toString()}\n${checkpointBody}`, 'utf8');
}

/** Generates a witness key pair; both texts use type byte 0x04. */
export function generateCosignerKey(name: string): { signerKey: string; verifierKey: string } {
  const seed = randomBytes(32);
  const cosigner = cosignerFromSeed(name, seed);
  const signerKey = PRIVATE_KEY_PREFIX + formatKeyText(name, cosigner.keyId, SIG_TYPE_COSIGNATURE_V1, seed);
  return { signerKey, verifierKey: cosigner.verifierKey };
}

/**
 * Accepts type 0x04 signer keys, and also plain Ed25519 (0x01) ones as transparency-dev/formats
 * does: the spec lets one Ed25519 key serve several signature types, the type byte in the key ID
 * keeping them apart. The key ID in the text is checked against the text's own type.
 */
export function cosignerFromKey(signerKey: string): Cosigner {
  const { name, key } = parseSignerKeyText(signerKey, [SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519]);
  return cosignerFromSeed(name, key);
}

export function cosignerFromSeed(name: string, seed: Uint8Array): Cosigner {
  checkKeyName(name);
  const { privateKey, publicKey } = ed25519FromSeed(seed);
  const keyId = computeKeyId(name, SIG_TYPE_COSIGNATURE_V1, publicKey);
  return {
    name,
    keyId,
    verifierKey: formatKeyText(name, keyId, SIG_TYPE_COSIGNATURE_V1, publicKey),
    cosign(checkpointBody, timestamp) {
      // A cosignature asserts log consistency, so refuse to sign anything but a checkpoint.
      parseCheckpoint(checkpointBody);
      if (!isUint(timestamp)) throw malformed('cosignature timestamp must be a non-negative safe integer');
      const ts = Buffer.alloc(TIMESTAMP_SIZE);
      ts.writeBigUInt64BE(BigInt(timestamp));
      const sig = ed25519Sign(privateKey, cosignatureMessage(checkpointBody, timestamp));
      return makeNoteSignature(name, keyId, Buffer.concat([ts, sig]));
    },
  };
}

/** A NoteVerifier for cosignature/v1, so `openNote` can check cosigned checkpoints directly. */
export function cosignatureV1Verifier(name: string, publicKey: Uint8Array): NoteVerifier {
  checkKeyName(name);
  const keyObject = ed25519PublicKey(publicKey);
  return {
    name,
    keyId: computeKeyId(name, SIG_TYPE_COSIGNATURE_V1, publicKey),
    type: 'cosignature/v1',
    verify(message, signature) {
      if (signature.length !== COSIGNATURE_V1_SIZE) return false;
      const timestamp = signature.readBigUInt64BE(0);
      if (timestamp > MAX_TIMESTAMP) return false;
      const body = message.toString('utf8');
      try {
        parseCheckpoint(body);
      } catch {
        return false;
      }
      return ed25519Verify(keyObject, cosignatureMessage(body, timestamp), signature.subarray(TIMESTAMP_SIZE));
    },
  };
}

/**
 * The timestamp inside a cosignature/v1 signature, unverified. Null when the signature has the
 * wrong size or a timestamp a JS number cannot hold exactly (past 2^53-1, far beyond any real one).
 */
export function cosignatureTimestamp(signature: NoteSignature): number | null {
  if (signature.signature.length !== COSIGNATURE_V1_SIZE) return null;
  const timestamp = signature.signature.readBigUInt64BE(0);
  return timestamp <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(timestamp) : null;
}

/**
 * Checks one cosignature (e.g. from a witness response) on a checkpoint body. Null if it is not
 * from this verifier's key or does not verify; the caller decides whether the timestamp is
 * acceptable (the spec lets verifiers reject future ones).
 */
export function verifyCosignature(
  verifier: NoteVerifier,
  checkpointBody: string,
  signature: NoteSignature,
): { timestamp: number } | null {
  if (verifier.type !== 'cosignature/v1') throw new Error('verifyCosignature needs a cosignature/v1 verifier');
  if (verifier.name !== signature.name || !verifier.keyId.equals(signature.keyId)) return null;
  const timestamp = cosignatureTimestamp(signature);
  if (timestamp === null) return null;
  return verifier.verify(Buffer.from(checkpointBody, 'utf8'), signature.signature) ? { timestamp } : null;
}
