import { randomBytes } from 'node:crypto';

/** Lower-case alphanumerics: the alphabet of every generated hashid and opaque id. */
export const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `length` characters drawn uniformly from `alphabet` with crypto randomness.
 *
 * Rejection sampling, not `byte % alphabet.length`: bytes at or above the largest multiple of the
 * alphabet size are thrown away, so every character is exactly equally likely (no modulo bias).
 */
export function randomString(length: number, alphabet: string = ID_ALPHABET): string {
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`length must be a positive integer, got ${length}`);
  if (alphabet.length < 2 || alphabet.length > 256) throw new RangeError('alphabet must have 2 to 256 characters');
  const size = alphabet.length;
  const limit = 256 - (256 % size); // accept bytes in [0, limit)
  let out = '';
  while (out.length < length) {
    // Ask for a little more than needed so one call usually suffices.
    const bytes = randomBytes(Math.ceil(((length - out.length) * 256) / limit) + 4);
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const b = bytes[i];
      if (b < limit) out += alphabet[b % size];
    }
  }
  return out;
}
