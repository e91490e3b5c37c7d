import { randomFillSync } from 'node:crypto';

/** Lower-case alphanumerics: the alphabet of every generated hashid and opaque id. */
export const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

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

/**
 * `length` characters drawn uniformly from `alphabet` with crypto randomness.
 *
 * Rejection sampling, not `byte % alphabet.length`: bytes at or above the largest multiple of the
 * alphabet size are thrown away, so every character is exactly equally likely (no modulo bias).
 */
export function randomString(
  length: number,
  alphabet: string = ID_ALPHABET,
  /** The byte source; tests pass a fixed sequence. */
  nextByte: () => number = nextRandomByte,
): string {
  return prefixedRandomString('', length, alphabet, nextByte);
}

/** Up to this many characters are made with one `String.fromCharCode` call (its arguments go on the stack). */
const ONE_CALL = 1024;

/**
 * `prefix` followed by `length` characters of `randomString`, made as one flat string.
 *
 * Ids travel in headers, JSON and SQL. A string built with `+=` or a template literal is, in V8, a
 * tree of pieces (a "cons string") once it is 13 characters or longer, and every later use that
 * needs its characters in one piece (a header value's validation, a regular expression, a write to a
 * socket) first copies it into one. Made from character codes, the id is one piece from the start:
 * a Node.js server answering with such an id in a header answered 7 % more requests/s than with the
 * same id built by `+=` (docs/performance.md, twelfth session).
 */
export function prefixedRandomString(
  prefix: string,
  length: number,
  alphabet: string = ID_ALPHABET,
  nextByte: () => number = nextRandomByte,
): string {
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`length must be a positive integer, got ${length}`);
  if (alphabet.length < 2 || alphabet.length > 256) throw new RangeError('alphabet must have 2 to 256 characters');
  const size = alphabet.length;
  const limit = 256 - (256 % size); // accept bytes in [0, limit)
  const codes = new Array<number>(prefix.length + length);
  let n = 0;
  for (; n < prefix.length; n++) codes[n] = prefix.charCodeAt(n);
  while (n < codes.length) {
    const b = nextByte();
    if (b < limit) codes[n++] = alphabet.charCodeAt(b % size);
  }
  if (codes.length <= ONE_CALL) return String.fromCharCode.apply(null, codes);
  let out = '';
  for (let from = 0; from < codes.length; from += ONE_CALL) out += String.fromCharCode.apply(null, codes.slice(from, from + ONE_CALL));
  return out;
}
