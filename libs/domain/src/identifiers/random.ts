import { randomFillSync } from 'node:crypto';

/** Lower-case alphanumerics: the alphabet of every generated hashid and opaque id. */
export const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `length` characters drawn uniformly from `alphabet` with crypto randomness.
 *
 * Rejection sampling, not `byte % alphabet.length`: bytes at or above the largest multiple of the
 * alphabet size are thrown away, so every character is exactly equally likely (no modulo bias).
 */
/**
 * Crypto random bytes served from a pool refilled 4 KiB at a time: one system call per few hundred
 * ids instead of one per id (ids are minted on every request, request ids included).
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

export function nextRandomByte(): number {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

export function randomString(
  length: number,
  alphabet: string = ID_ALPHABET,
  /** The byte source; tests pass a fixed sequence. */
  nextByte: () => number = nextRandomByte,
): string {
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`length must be a positive integer, got ${length}`);
  if (alphabet.length < 2 || alphabet.length > 256) throw new RangeError('alphabet must have 2 to 256 characters');
  const size = alphabet.length;
  const limit = 256 - (256 % size); // accept bytes in [0, limit)
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < limit) out += alphabet[b % size];
  }
  return out;
}
