import { checkTreeIndex } from './bits';
import { emptyRoot } from './hashing';
import { hashRanges, LeafRange, NodeReader } from './node-reader';
import { consistencyShape, ConsistencyShape, inclusionShape } from './proof-shapes';
import { isValidSubtree } from './range';

/**
 * Proof generation from stored perfect-subtree nodes only (the nodes CompactRange.append reports). Each call
 * reads every node it needs in ONE call to `read` (O(log n) deduplicated ids, none when nothing is needed), and
 * which nodes are read depends on nothing but the sizes and indexes asked about; every node read is complete
 * within the tree the proof is about. Invalid arguments reject with a RangeError.
 */

/** Root of the tree of `size` leaves: its compact range, folded from the right. */
export async function treeRootFromNodes(size: number, read: NodeReader): Promise<Buffer> {
  checkTreeIndex('size', size);
  if (size === 0) return emptyRoot();
  const [root] = await hashRanges([[0, size]], read);
  return root;
}

/** Hash of the valid subtree [start, end) (see isValidSubtree); the empty root when start = end. */
export async function subtreeRootFromNodes(start: number, end: number, read: NodeReader): Promise<Buffer> {
  checkTreeIndex('start', start);
  checkTreeIndex('end', end);
  if (start === end) return emptyRoot();
  if (!isValidSubtree(start, end)) throw new RangeError(`[${start}, ${end}) is not a valid subtree`);
  const [root] = await hashRanges([[start, end]], read);
  return root;
}

/** RFC 9162 2.1.3 inclusion proof (audit path) of leaf `leafIndex` in the tree of `treeSize` leaves. */
export async function inclusionProof(leafIndex: number, treeSize: number, read: NodeReader): Promise<Buffer[]> {
  checkTreeIndex('leafIndex', leafIndex);
  checkTreeIndex('treeSize', treeSize);
  if (leafIndex >= treeSize) throw new RangeError(`leaf index ${leafIndex} is not below tree size ${treeSize}`);
  return hashRanges(
    inclusionShape(leafIndex, 0, treeSize).map((step) => step.sibling),
    read,
  );
}

/** RFC 9162 2.1.4 consistency proof from the tree of `size1` leaves to that of `size2` (0 < size1 <= size2). */
export async function consistencyProof(size1: number, size2: number, read: NodeReader): Promise<Buffer[]> {
  checkTreeIndex('size1', size1);
  checkTreeIndex('size2', size2);
  if (size1 > size2) throw new RangeError(`size1 ${size1} > size2 ${size2}`);
  if (size1 === 0) throw new RangeError('a consistency proof from the empty tree is meaningless');
  return hashRanges(shapeRanges(consistencyShape(0, size1, size2)), read);
}

/** Inclusion proof of leaf `leafIndex` (start <= leafIndex < end) in the valid subtree [start, end). */
export async function subtreeInclusionProof(
  leafIndex: number,
  start: number,
  end: number,
  read: NodeReader,
): Promise<Buffer[]> {
  checkTreeIndex('leafIndex', leafIndex);
  checkTreeIndex('start', start);
  checkTreeIndex('end', end);
  if (!isValidSubtree(start, end)) throw new RangeError(`[${start}, ${end}) is not a valid subtree`);
  if (leafIndex < start || leafIndex >= end) {
    throw new RangeError(`leaf index ${leafIndex} is outside [${start}, ${end})`);
  }
  return hashRanges(
    inclusionShape(leafIndex, start, end).map((step) => step.sibling),
    read,
  );
}

/** Consistency proof of the valid subtree [start, end) with the tree of `size` leaves (empty when start = end). */
export async function subtreeConsistencyProof(
  start: number,
  end: number,
  size: number,
  read: NodeReader,
): Promise<Buffer[]> {
  checkTreeIndex('start', start);
  checkTreeIndex('end', end);
  checkTreeIndex('size', size);
  if (start > end || end > size) throw new RangeError(`[${start}, ${end}) is not within a tree of size ${size}`);
  if (start === end) return [];
  if (!isValidSubtree(start, end)) throw new RangeError(`[${start}, ${end}) is not a valid subtree`);
  return hashRanges(shapeRanges(consistencyShape(start, end, size)), read);
}

function shapeRanges(shape: ConsistencyShape): LeafRange[] {
  const siblings = shape.steps.map((step) => step.sibling);
  return shape.seed ? [shape.seed, ...siblings] : siblings;
}
