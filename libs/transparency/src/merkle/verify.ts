import { isTreeIndex, shiftRight } from './bits';
import { isHash, nodeHash, sameBytes } from './hashing';
import { consistencyShape } from './proof-shapes';

/**
 * Proof verification. Every function returns false, never throws, on malformed input (wrong-length hashes,
 * proofs of the wrong length, out-of-range or non-integer sizes), matching the error cases of
 * transparency-dev/merkle's proof package and its test vectors.
 */

function isProof(proof: unknown): proof is readonly Uint8Array[] {
  return Array.isArray(proof) && proof.every(isHash);
}

/**
 * The root a valid inclusion proof implies, by RFC 9162 2.1.3.2 (independent of the generator's shapes on
 * purpose); null when the inputs cannot form a proof. Requires 0 <= leafIndex < treeSize.
 */
export function rootFromInclusionProof(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
): Buffer | null {
  if (!isTreeIndex(leafIndex) || !isTreeIndex(treeSize) || leafIndex >= treeSize) return null;
  if (!isHash(leafHash) || !isProof(proof)) return null;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Buffer = Buffer.from(leafHash);
  for (const p of proof) {
    if (sn === 0) return null; // more hashes than levels
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      // On the right edge, levels where the path has no sibling are skipped.
      while (fn % 2 === 0 && fn !== 0) {
        fn = shiftRight(fn, 1);
        sn = shiftRight(sn, 1);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = shiftRight(fn, 1);
    sn = shiftRight(sn, 1);
  }
  return sn === 0 ? r : null; // fewer hashes than levels otherwise
}

/** RFC 9162 2.1.3.2: whether `proof` shows leaf `leafIndex` with `leafHash` in the tree of `treeSize` with `root`. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const computed = rootFromInclusionProof(leafIndex, treeSize, leafHash, proof);
  return computed !== null && isHash(root) && sameBytes(computed, root);
}

/**
 * RFC 9162 2.1.4.2: whether `proof` shows the tree of `size1` leaves with `root1` is a prefix of the tree of
 * `size2` leaves with `root2`. As in transparency-dev/merkle: size1 = 0 is always rejected (a proof from the
 * empty tree is meaningless), and size1 = size2 holds iff the proof is empty and the roots are byte-equal.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isTreeIndex(size1) || !isTreeIndex(size2) || size1 === 0 || size1 > size2) return false;
  return checkConsistency(0, size1, size2, proof, root1, root2);
}

/**
 * The subtree and tree roots a consistency proof implies for the valid, non-empty subtree [start, end) of the
 * tree of `size` leaves (start = 0: an RFC 9162 consistency proof from size `end`); null when the proof has the
 * wrong length. `subtreeRoot` must equal root1 for the proof to hold.
 */
export function rootsFromConsistencyProof(
  start: number,
  end: number,
  size: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
): { subtreeRoot: Buffer; treeRoot: Buffer } | null {
  const { seed, steps } = consistencyShape(start, end, size);
  const offset = seed ? 1 : 0;
  if (proof.length !== offset + steps.length) return null;
  let subtreeRoot: Buffer = Buffer.from(seed ? proof[0] : root1);
  let treeRoot = subtreeRoot;
  steps.forEach((step, i) => {
    const p = proof[offset + i];
    if (step.inSubtree) subtreeRoot = nodeHash(p, subtreeRoot);
    treeRoot = step.onLeft ? nodeHash(p, treeRoot) : nodeHash(treeRoot, p);
  });
  return { subtreeRoot, treeRoot };
}

/** Shared by plain and subtree consistency; [start, end) must be a valid, non-empty subtree with end <= size. */
export function checkConsistency(
  start: number,
  end: number,
  size: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isProof(proof)) return false;
  if (start === 0 && end === size) {
    // The same tree: nothing to prove. Byte equality only, whatever the length, as transparency-dev/merkle's
    // vectors require ("sizes are equal (one) and proof is empty" passes with 12-byte roots).
    return proof.length === 0 && root1 instanceof Uint8Array && root2 instanceof Uint8Array && sameBytes(root1, root2);
  }
  if (!isHash(root1) || !isHash(root2)) return false;
  const roots = rootsFromConsistencyProof(start, end, size, proof, root1);
  return roots !== null && sameBytes(roots.subtreeRoot, root1) && sameBytes(roots.treeRoot, root2);
}
