/**
 * Integer helpers for leaf indexes and tree sizes.
 *
 * Sizes and indexes are plain JS numbers limited to safe integers (< 2^53). JS bit operators work on 32 bits,
 * so they are off limits here: shifts are exact divisions and multiplications by powers of two instead.
 */

/** Whether `n` is usable as a tree size or leaf index: a non-negative safe integer. */
export function isTreeIndex(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Throws a RangeError unless `n` is a non-negative safe integer. */
export function checkTreeIndex(name: string, n: number): void {
  if (!isTreeIndex(n)) {
    throw new RangeError(`${name} must be a non-negative safe integer, got ${String(n)}`);
  }
}

/** `n >> k` for safe integers. */
export function shiftRight(n: number, k: number): number {
  return Math.floor(n / 2 ** k);
}

/** Number of bits needed to write `n` (0 for 0). */
export function bitLength(n: number): number {
  // toString(2) is exact for safe integers, unlike Math.log2 near powers of two.
  return n === 0 ? 0 : n.toString(2).length;
}

/** Number of trailing zero bits of `n`; `n` must be positive. */
export function trailingZeros(n: number): number {
  let zeros = 0;
  while (n % 2 === 0) {
    n /= 2;
    zeros++;
  }
  return zeros;
}

/** The largest power of two strictly below `n` (n >= 2): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  return 2 ** (bitLength(n - 1) - 1);
}

/** The smallest power of two at least `n`. */
export function bitCeil(n: number): number {
  return n <= 1 ? 1 : 2 ** bitLength(n - 1);
}
