import { splitPoint } from './bits';
import type { LeafRange } from './node-reader';

/**
 * Which leaf ranges a proof is made of, and how a verifier chains them. Proof generation (hash each range) and
 * consistency verification (chain the hashes) both follow these shapes, so they cannot drift apart. Callers
 * validate arguments first.
 */

/** One proof hash: the sibling subtree met on the way up, bottom-up. */
export interface ProofStep {
  sibling: LeafRange;
  /** The sibling is the left child, so it is hashed in as H(sibling || path). */
  onLeft: boolean;
}

/** RFC 9162 2.1.3.1 PATH(index - start, D[start:end]), as the leaf ranges of its hashes, bottom-up. */
export function inclusionShape(index: number, start: number, end: number): ProofStep[] {
  const steps: ProofStep[] = [];
  let lo = start;
  let hi = end;
  while (hi - lo > 1) {
    const mid = lo + splitPoint(hi - lo);
    if (index < mid) {
      steps.push({ sibling: [mid, hi], onLeft: false });
      hi = mid;
    } else {
      steps.push({ sibling: [lo, mid], onLeft: true });
      lo = mid;
    }
  }
  return steps.reverse();
}

export interface ConsistencyStep extends ProofStep {
  /** The sibling lies inside [start, end), so it is part of the subtree hash as well as of the tree root. */
  inSubtree: boolean;
}

export interface ConsistencyShape {
  /**
   * The first proof hash when [start, end) is not itself a node of the tree of `size` leaves: the highest node
   * on the subtree's right edge that is. Null when the subtree is a node, whose hash the verifier already holds.
   */
  seed: LeafRange | null;
  steps: ConsistencyStep[];
}

/**
 * The subtree consistency proof of draft-ietf-plants-merkle-tree-certs (section 4.4) for the valid, non-empty
 * subtree [start, end) of the tree of `size` leaves. With start = 0 it is exactly RFC 9162 2.1.4.1
 * PROOF(end, D[0:size]). Walks down from the root: a subtree inside one child contributes the other child; a
 * subtree straddling both halves (only possible when it starts at the node's first leaf) continues as the part
 * of it in the right half, which is then no longer a node the verifier knows.
 */
export function consistencyShape(start: number, end: number, size: number): ConsistencyShape {
  const steps: ConsistencyStep[] = [];
  let lo = 0;
  let hi = size;
  let from = start;
  let known = true;
  while (!(from === lo && end === hi)) {
    const mid = lo + splitPoint(hi - lo);
    if (end <= mid) {
      steps.push({ sibling: [mid, hi], onLeft: false, inSubtree: false });
      hi = mid;
    } else if (from >= mid) {
      steps.push({ sibling: [lo, mid], onLeft: true, inSubtree: false });
      lo = mid;
    } else {
      if (from !== lo) throw new Error(`[${start}, ${end}) is not a valid subtree`);
      steps.push({ sibling: [lo, mid], onLeft: true, inSubtree: true });
      lo = mid;
      from = mid;
      known = false;
    }
  }
  return { seed: known ? null : [lo, hi], steps: steps.reverse() };
}
