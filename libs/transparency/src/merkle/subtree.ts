import { isTreeIndex } from './bits';
import { emptyRoot, isHash, sameBytes } from './hashing';
import { isValidSubtree } from './range';
import { checkConsistency, verifyInclusion } from './verify';

/**
 * Subtree proofs of draft-ietf-plants-merkle-tree-certs, as transparency-dev/merkle verifies them
 * (VerifySubtreeInclusion / VerifySubtreeConsistency). A subtree [start, end) is valid when start is a multiple of
 * the smallest power of two >= end - start; its hash is the MTH of leaves start..end-1 as a tree of their own.
 */

/**
 * Whether `proof` shows leaf `leafIndex` (an index in the whole log, start <= leafIndex < end) with `leafHash`
 * in the subtree [start, end) whose hash is `root`. It is the RFC 9162 inclusion proof of leafIndex - start in
 * the tree of the end - start leaves of the subtree.
 */
export function verifySubtreeInclusion(
  leafIndex: number,
  start: number,
  end: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isTreeIndex(leafIndex) || !isValidSubtree(start, end)) return false;
  if (leafIndex < start || leafIndex >= end) return false;
  return verifyInclusion(leafIndex - start, end - start, leafHash, proof, root);
}

/**
 * Whether `proof` shows the subtree [start, end) with hash `root1` is part of the tree of `size` leaves with
 * root `root2`. With start = 0 this is RFC 9162 consistency from size `end`, except that the empty subtree
 * (start = end <= size) is accepted on its own: it holds iff root1 is the empty root and the proof is empty,
 * whatever root2 is, as the transparency-dev/merkle vectors require.
 */
export function verifySubtreeConsistency(
  start: number,
  end: number,
  size: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isTreeIndex(start) || !isTreeIndex(end) || !isTreeIndex(size)) return false;
  if (start > end || end > size) return false;
  if (start === end) {
    return Array.isArray(proof) && proof.length === 0 && isHash(root1) && sameBytes(root1, emptyRoot());
  }
  if (!isValidSubtree(start, end)) return false;
  return checkConsistency(start, end, size, proof, root1, root2);
}
