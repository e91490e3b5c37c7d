import { createHash, hash } from 'node:crypto';
import { splitPoint } from './bits';

/**
 * RFC 6962 / RFC 9162 section 2.1.1 hashing with SHA-256. The 0x00 / 0x01 prefixes keep a leaf from ever being
 * mistaken for an interior node (second-preimage resistance).
 */

export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);
const EMPTY_ROOT = createHash('sha256').digest();

/** MTH({}) = SHA-256 of the empty string (e3b0c442...). */
export function emptyRoot(): Buffer {
  return Buffer.from(EMPTY_ROOT);
}

/** SHA-256(0x00 || data). */
export function leafHash(data: Uint8Array): Buffer {
  return hash('sha256', Buffer.concat([LEAF_PREFIX, data]), 'buffer');
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return hash('sha256', Buffer.concat([NODE_PREFIX, left, right]), 'buffer');
}

/** Whether `h` is a byte array of exactly HASH_SIZE bytes. */
export function isHash(h: unknown): h is Uint8Array {
  return h instanceof Uint8Array && h.length === HASH_SIZE;
}

/** Byte-wise equality of two byte arrays of any length. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/**
 * MTH over leaf hashes, straight from the recursive RFC 9162 definition (split at the largest power of two
 * below n). Deliberately independent of the compact-range code so the tests can use it as the reference.
 */
export function rootOfLeaves(leafHashes: readonly Uint8Array[]): Buffer {
  leafHashes.forEach((h, i) => {
    if (!isHash(h)) throw new RangeError(`leaf hash ${i} must be ${HASH_SIZE} bytes`);
  });
  if (leafHashes.length === 0) return emptyRoot();
  return mth(leafHashes, 0, leafHashes.length);
}

function mth(hashes: readonly Uint8Array[], begin: number, end: number): Buffer {
  const n = end - begin;
  if (n === 1) return Buffer.from(hashes[begin]);
  const k = splitPoint(n);
  return nodeHash(mth(hashes, begin, begin + k), mth(hashes, begin + k, end));
}
