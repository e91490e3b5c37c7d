import { checkTreeIndex, shiftRight } from './bits';
import { emptyRoot, HASH_SIZE, isHash, nodeHash } from './hashing';
import { NodeId, rangeNodes } from './range';

/** A node that became complete on append, for the store to save. */
export type CompletedNode = NodeId & { hash: Buffer };

/**
 * Appends leaves to a tree whose right edge (the perfect subtrees of rangeNodes(0, size), left to right) is
 * known. The edge is all a log writer needs to keep in memory: O(log n) hashes give the root and every new
 * interior node, so the store never has to be re-read to append.
 */
export class CompactRange {
  private count: number;
  private readonly hashes: Buffer[];

  /** Throws when `edge` does not hold exactly one HASH_SIZE-byte hash per node of rangeNodes(0, size). */
  constructor(size: number, edge: readonly Uint8Array[]) {
    checkTreeIndex('size', size);
    const expected = rangeNodes(0, size).length;
    if (edge.length !== expected) {
      throw new RangeError(`a tree of size ${size} has ${expected} edge nodes, got ${edge.length}`);
    }
    edge.forEach((h, i) => {
      if (!isHash(h)) throw new RangeError(`edge hash ${i} must be ${HASH_SIZE} bytes`);
    });
    this.count = size;
    this.hashes = edge.map((h) => Buffer.from(h));
  }

  /** The node ids of the edge of a tree of `size` leaves, in the order the constructor takes their hashes. */
  static edgeIds(size: number): NodeId[] {
    return rangeNodes(0, size);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Appends one leaf hash; returns every perfect-subtree node that became complete, including the leaf itself at
   * level 0, bottom-up. Each trailing 1 bit of the old size is an edge node that now has a right sibling.
   */
  append(leafHash: Uint8Array): CompletedNode[] {
    if (!isHash(leafHash)) throw new RangeError(`leaf hash must be ${HASH_SIZE} bytes`);
    if (!Number.isSafeInteger(this.count + 1)) throw new RangeError('tree size would exceed 2^53 - 1');
    let hash: Buffer = Buffer.from(leafHash);
    let level = 0;
    let index = this.count;
    const completed: CompletedNode[] = [{ level, index, hash: Buffer.from(hash) }];
    for (let rest = this.count; rest % 2 === 1; rest = shiftRight(rest, 1)) {
      const left = this.hashes.pop();
      if (!left) throw new Error('compact range edge is inconsistent with its size');
      hash = nodeHash(left, hash);
      level++;
      index = shiftRight(index, 1);
      completed.push({ level, index, hash: Buffer.from(hash) });
    }
    this.hashes.push(hash);
    this.count++;
    return completed;
  }

  /** MTH of the current tree: the edge folded from the right (emptyRoot when size 0). */
  root(): Buffer {
    if (this.hashes.length === 0) return emptyRoot();
    let hash = this.hashes[this.hashes.length - 1];
    for (let i = this.hashes.length - 2; i >= 0; i--) hash = nodeHash(this.hashes[i], hash);
    return Buffer.from(hash);
  }

  /** Copies of the edge hashes, in CompactRange.edgeIds(size) order. */
  edge(): Buffer[] {
    return this.hashes.map((h) => Buffer.from(h));
  }
}
