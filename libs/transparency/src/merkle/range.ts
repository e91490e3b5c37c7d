import { bitCeil, bitLength, checkTreeIndex, isTreeIndex, trailingZeros } from './bits';

/** A perfect subtree: level L, index i covers leaves [i*2^L, (i+1)*2^L). Level 0 = the leaf hashes. */
export interface NodeId {
  level: number;
  index: number;
}

/** A stable map key for a node, e.g. for a store keyed by (level, index). */
export function nodeKey(id: NodeId): string {
  return `${id.level}/${id.index}`;
}

/** The leaves [begin, end) a node covers. */
export function nodeCoverage(id: NodeId): [begin: number, end: number] {
  const width = 2 ** id.level;
  return [id.index * width, (id.index + 1) * width];
}

/**
 * The perfect subtrees (left to right) whose leaves are exactly [begin, end): the compact range of
 * transparency-dev/merkle. Greedy from the left, each step takes the largest node aligned at the current
 * position that still fits, which yields the unique minimal cover (sizes rise, then fall).
 */
export function rangeNodes(begin: number, end: number): NodeId[] {
  checkTreeIndex('begin', begin);
  checkTreeIndex('end', end);
  if (begin > end) throw new RangeError(`begin ${begin} > end ${end}`);
  const nodes: NodeId[] = [];
  let pos = begin;
  while (pos < end) {
    let level = bitLength(end - pos) - 1;
    if (pos > 0) level = Math.min(level, trailingZeros(pos));
    const width = 2 ** level;
    nodes.push({ level, index: pos / width });
    pos += width;
  }
  return nodes;
}

/**
 * Whether [start, end) is a non-empty subtree in the sense of draft-ietf-plants-merkle-tree-certs (and
 * transparency-dev/merkle's isSubtreeValid): start is a multiple of the smallest power of two >= end - start.
 * Such a range is a node of every RFC 9162 tree that contains it, or a right-edge part of one, so its hash is
 * well defined and is the fold of its compact range.
 */
export function isValidSubtree(start: number, end: number): boolean {
  if (!isTreeIndex(start) || !isTreeIndex(end) || start >= end) return false;
  return start % bitCeil(end - start) === 0;
}
