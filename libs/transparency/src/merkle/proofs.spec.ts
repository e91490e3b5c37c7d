import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { CompactRange } from './compact-range';
import { leafHash, nodeHash, rootOfLeaves } from './hashing';
import type { NodeReader } from './node-reader';
import {
  consistencyProof,
  inclusionProof,
  subtreeConsistencyProof,
  subtreeInclusionProof,
  treeRootFromNodes,
} from './proofs';
import { isValidSubtree, NodeId, nodeCoverage, nodeKey } from './range';
import { verifySubtreeConsistency, verifySubtreeInclusion } from './subtree';
import { verifyConsistency, verifyInclusion } from './verify';

const MAX_LEAVES = 300;

/** Leaf hashes of a random tree, plus its node store as CompactRange.append fills it. */
function randomTree(size: number) {
  const salt = randomBytes(16);
  const leaves = Array.from({ length: size }, (_, i) => leafHash(Buffer.concat([salt, Buffer.from(String(i))])));
  const store = new Map<string, Buffer>();
  const range = new CompactRange(0, []);
  for (const leaf of leaves) for (const node of range.append(leaf)) store.set(nodeKey(node), node.hash);
  return { leaves, store };
}

/** A reader that records its calls and refuses nodes not yet complete in a tree of `treeSize` leaves. */
function recordingReader(store: Map<string, Buffer>, treeSize: number) {
  const calls: NodeId[][] = [];
  const read: NodeReader = async (ids) => {
    calls.push([...ids]);
    return ids.map((id) => {
      if (nodeCoverage(id)[1] > treeSize) throw new Error(`node ${nodeKey(id)} is not in a tree of ${treeSize}`);
      const hash = store.get(nodeKey(id));
      if (!hash) throw new Error(`no node ${nodeKey(id)}`);
      return hash;
    });
  };
  return { read, calls };
}

/** One read with O(log n) distinct ids, or none for an empty proof. */
function expectFrugalReads(calls: NodeId[][], proofLength: number, treeSize: number): void {
  expect(calls).toHaveLength(proofLength === 0 ? 0 : 1);
  const ids = calls.flat();
  expect(new Set(ids.map(nodeKey)).size).toBe(ids.length);
  expect(ids.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(Math.max(treeSize, 1))) + 2);
}

const largestPow2Below = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** RFC 9162 2.1.3.1 PATH, straight from the definition. */
function referencePath(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = largestPow2Below(leaves.length);
  return m < k
    ? [...referencePath(m, leaves.slice(0, k)), rootOfLeaves(leaves.slice(k))]
    : [...referencePath(m - k, leaves.slice(k)), rootOfLeaves(leaves.slice(0, k))];
}

/** RFC 9162 2.1.4.1 SUBPROOF, straight from the definition. */
function referenceSubproof(m: number, leaves: Buffer[], complete: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [rootOfLeaves(leaves)];
  const k = largestPow2Below(n);
  return m <= k
    ? [...referenceSubproof(m, leaves.slice(0, k), complete), rootOfLeaves(leaves.slice(k))]
    : [...referenceSubproof(m - k, leaves.slice(k), false), rootOfLeaves(leaves.slice(0, k))];
}

/** Copies of `hashes` with one byte of one of them changed. */
function flipByte(hashes: readonly Buffer[], position: number, mask: number): Buffer[] {
  const copy = hashes.map((h) => Buffer.from(h));
  let at = position % copy.reduce((sum, h) => sum + h.length, 0);
  for (const h of copy) {
    if (at < h.length) {
      h[at] ^= mask;
      break;
    }
    at -= h.length;
  }
  return copy;
}

const sizeArb = fc.integer({ min: 1, max: MAX_LEAVES });
const flipArb = fc.record({ position: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) });

describe('inclusion proofs from stored nodes', () => {
  it('match RFC 9162 PATH, read once, and verify against rootOfLeaves', async () => {
    await fc.assert(
      fc.asyncProperty(sizeArb, fc.nat(), async (size, pick) => {
        const { leaves, store } = randomTree(size);
        const index = pick % size;
        const { read, calls } = recordingReader(store, size);
        const proof = await inclusionProof(index, size, read);
        expectFrugalReads(calls, proof.length, size);
        expect(proof).toEqual(referencePath(index, leaves));
        const root = rootOfLeaves(leaves);
        expect(verifyInclusion(index, size, leaves[index], proof, root)).toBe(true);
        expect(await treeRootFromNodes(size, recordingReader(store, size).read)).toEqual(root);
      }),
      { numRuns: 150 },
    );
  });

  it('fail verification when any byte of the proof, leaf hash or root changes', async () => {
    await fc.assert(
      fc.asyncProperty(sizeArb, fc.nat(), flipArb, async (size, pick, { position, mask }) => {
        const { leaves, store } = randomTree(size);
        const index = pick % size;
        const proof = await inclusionProof(index, size, recordingReader(store, size).read);
        const root = rootOfLeaves(leaves);
        const [leaf] = flipByte([leaves[index]], position, mask);
        const [badRoot] = flipByte([root], position, mask);
        expect(verifyInclusion(index, size, leaf, proof, root)).toBe(false);
        expect(verifyInclusion(index, size, leaves[index], proof, badRoot)).toBe(false);
        if (proof.length > 0) {
          expect(verifyInclusion(index, size, leaves[index], flipByte(proof, position, mask), root)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('hold for no other leaf index or tree size (exhaustive up to 20 leaves)', async () => {
    const { leaves, store } = randomTree(20);
    const roots = Array.from({ length: 21 }, (_, n) => rootOfLeaves(leaves.slice(0, n)));
    for (let size = 1; size <= 20; size++) {
      for (let index = 0; index < size; index++) {
        const proof = await inclusionProof(index, size, recordingReader(store, size).read);
        for (let otherSize = 1; otherSize <= 20; otherSize++) {
          for (let otherIndex = 0; otherIndex < otherSize; otherIndex++) {
            const same = otherSize === size && otherIndex === index;
            const ok = verifyInclusion(otherIndex, otherSize, leaves[index], proof, roots[otherSize]);
            if (ok !== same) throw new Error(`proof of ${index}/${size} vs ${otherIndex}/${otherSize}: ${ok}`);
          }
        }
      }
    }
  });
});

describe('consistency proofs from stored nodes', () => {
  it('match RFC 9162 PROOF, read once, and verify against rootOfLeaves', async () => {
    await fc.assert(
      fc.asyncProperty(sizeArb, fc.nat(), async (size2, pick) => {
        const { leaves, store } = randomTree(size2);
        const size1 = 1 + (pick % size2);
        const { read, calls } = recordingReader(store, size2);
        const proof = await consistencyProof(size1, size2, read);
        expectFrugalReads(calls, proof.length, size2);
        expect(proof).toEqual(referenceSubproof(size1, leaves, true));
        const root1 = rootOfLeaves(leaves.slice(0, size1));
        const root2 = rootOfLeaves(leaves);
        expect(verifyConsistency(size1, size2, proof, root1, root2)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('fail verification when any byte of the proof or either root changes', async () => {
    await fc.assert(
      fc.asyncProperty(sizeArb, fc.nat(), flipArb, async (size2, pick, { position, mask }) => {
        const { leaves, store } = randomTree(size2);
        const size1 = 1 + (pick % size2);
        const proof = await consistencyProof(size1, size2, recordingReader(store, size2).read);
        const root1 = rootOfLeaves(leaves.slice(0, size1));
        const root2 = rootOfLeaves(leaves);
        const [bad1] = flipByte([root1], position, mask);
        const [bad2] = flipByte([root2], position, mask);
        expect(verifyConsistency(size1, size2, proof, bad1, root2)).toBe(false);
        expect(verifyConsistency(size1, size2, proof, root1, bad2)).toBe(false);
        if (proof.length > 0) {
          expect(verifyConsistency(size1, size2, flipByte(proof, position, mask), root1, root2)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('hold for no other pair of sizes (exhaustive up to 20 leaves)', async () => {
    const { leaves, store } = randomTree(20);
    const roots = Array.from({ length: 21 }, (_, n) => rootOfLeaves(leaves.slice(0, n)));
    for (let size2 = 1; size2 <= 20; size2++) {
      for (let size1 = 1; size1 <= size2; size1++) {
        const proof = await consistencyProof(size1, size2, recordingReader(store, size2).read);
        for (let other2 = 1; other2 <= 20; other2++) {
          for (let other1 = 1; other1 <= other2; other1++) {
            const same = other1 === size1 && other2 === size2;
            const ok = verifyConsistency(other1, other2, proof, roots[other1], roots[other2]);
            // An empty proof is right for every size1 = size2.
            const expected = same || (proof.length === 0 && other1 === other2);
            if (ok !== expected) throw new Error(`proof ${size1}->${size2} vs ${other1}->${other2}: ${ok}`);
          }
        }
      }
    }
  });
});

describe('subtree proofs from stored nodes', () => {
  const subtreeArb = fc
    .record({ end: sizeArb, startPick: fc.nat(), indexPick: fc.nat(), sizePick: fc.nat() })
    .map(({ end, startPick, indexPick, sizePick }) => {
      const starts = Array.from({ length: end }, (_, s) => s).filter((s) => isValidSubtree(s, end));
      const start = starts[startPick % starts.length];
      return {
        start,
        end,
        index: start + (indexPick % (end - start)),
        size: end + (sizePick % (MAX_LEAVES - end + 1)),
      };
    });

  it('inclusion: reads once and verifies against the subtree hash; any changed byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(subtreeArb, flipArb, async ({ start, end, index }, { position, mask }) => {
        const { leaves, store } = randomTree(end);
        const { read, calls } = recordingReader(store, end);
        const proof = await subtreeInclusionProof(index, start, end, read);
        expectFrugalReads(calls, proof.length, end - start);
        expect(proof).toEqual(referencePath(index - start, leaves.slice(start, end)));
        const root = rootOfLeaves(leaves.slice(start, end));
        expect(verifySubtreeInclusion(index, start, end, leaves[index], proof, root)).toBe(true);
        expect(verifySubtreeInclusion(index, start, end, leaves[index], proof, flipByte([root], position, mask)[0]))
          .toBe(false);
        if (proof.length > 0) {
          const bad = flipByte(proof, position, mask);
          expect(verifySubtreeInclusion(index, start, end, leaves[index], bad, root)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('consistency: reads once and verifies against both roots; any changed byte fails', async () => {
    await fc.assert(
      fc.asyncProperty(subtreeArb, flipArb, async ({ start, end, size }, { position, mask }) => {
        const { leaves, store } = randomTree(size);
        const { read, calls } = recordingReader(store, size);
        const proof = await subtreeConsistencyProof(start, end, size, read);
        expectFrugalReads(calls, proof.length, size);
        const root1 = rootOfLeaves(leaves.slice(start, end));
        const root2 = rootOfLeaves(leaves);
        if (start === 0) expect(proof).toEqual(referenceSubproof(end, leaves, true));
        expect(verifySubtreeConsistency(start, end, size, proof, root1, root2)).toBe(true);
        const [bad1] = flipByte([root1], position, mask);
        const [bad2] = flipByte([root2], position, mask);
        expect(verifySubtreeConsistency(start, end, size, proof, bad1, root2)).toBe(false);
        expect(verifySubtreeConsistency(start, end, size, proof, root1, bad2)).toBe(false);
        if (proof.length > 0) {
          expect(verifySubtreeConsistency(start, end, size, flipByte(proof, position, mask), root1, root2)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('accepts the empty subtree only with the empty root and an empty proof', async () => {
    const { leaves, store } = randomTree(5);
    const empty = rootOfLeaves([]);
    expect(await subtreeConsistencyProof(3, 3, 5, recordingReader(store, 5).read)).toEqual([]);
    expect(verifySubtreeConsistency(3, 3, 5, [], empty, rootOfLeaves(leaves))).toBe(true);
    expect(verifySubtreeConsistency(3, 3, 5, [empty], empty, rootOfLeaves(leaves))).toBe(false);
    expect(verifySubtreeConsistency(3, 3, 5, [], leaves[3], rootOfLeaves(leaves))).toBe(false);
    expect(verifySubtreeConsistency(6, 6, 5, [], empty, rootOfLeaves(leaves))).toBe(false);
  });

  it('rejects invalid subtrees whatever the proof', async () => {
    const { leaves, store } = randomTree(16);
    const root = rootOfLeaves(leaves);
    const proof = await subtreeConsistencyProof(8, 12, 16, recordingReader(store, 16).read);
    expect(verifySubtreeConsistency(8, 12, 16, proof, rootOfLeaves(leaves.slice(8, 12)), root)).toBe(true);
    // [2, 6) has 4 leaves but does not start on a multiple of 4.
    expect(verifySubtreeConsistency(2, 6, 16, proof, rootOfLeaves(leaves.slice(2, 6)), root)).toBe(false);
    await expect(subtreeConsistencyProof(2, 6, 16, recordingReader(store, 16).read)).rejects.toThrow(RangeError);
    await expect(subtreeInclusionProof(3, 2, 6, recordingReader(store, 16).read)).rejects.toThrow(RangeError);
  });
});

describe('argument checking', () => {
  const { leaves, store } = randomTree(8);
  const read = recordingReader(store, 8).read;
  const root = rootOfLeaves(leaves);

  it.each([
    ['inclusionProof(-1, 4)', () => inclusionProof(-1, 4, read)],
    ['inclusionProof(4, 4)', () => inclusionProof(4, 4, read)],
    ['inclusionProof(0.5, 4)', () => inclusionProof(0.5, 4, read)],
    ['inclusionProof(0, 2^53)', () => inclusionProof(0, 2 ** 53, read)],
    ['consistencyProof(0, 4)', () => consistencyProof(0, 4, read)],
    ['consistencyProof(5, 4)', () => consistencyProof(5, 4, read)],
    ['consistencyProof(1, NaN)', () => consistencyProof(1, Number.NaN, read)],
    ['treeRootFromNodes(-1)', () => treeRootFromNodes(-1, read)],
    ['subtreeInclusionProof(4, 0, 4)', () => subtreeInclusionProof(4, 0, 4, read)],
    ['subtreeConsistencyProof(0, 5, 4)', () => subtreeConsistencyProof(0, 5, 4, read)],
  ])('%s rejects with a RangeError', async (_name, call) => {
    await expect(call()).rejects.toThrow(RangeError);
  });

  it('refuses a reader that answers the wrong number of hashes or malformed ones', async () => {
    await expect(inclusionProof(0, 8, async (ids) => ids.slice(1).map(() => leaves[0]))).rejects.toThrow(
      /answered/,
    );
    await expect(inclusionProof(0, 8, async (ids) => ids.map(() => Buffer.alloc(31)))).rejects.toThrow(/malformed/);
  });

  it('does not call the reader when nothing needs reading', async () => {
    const { read: counted, calls } = recordingReader(store, 8);
    expect(await inclusionProof(0, 1, counted)).toEqual([]);
    expect(await consistencyProof(8, 8, counted)).toEqual([]);
    expect(await treeRootFromNodes(0, counted)).toEqual(rootOfLeaves([]));
    expect(calls).toHaveLength(0);
  });

  it('verifiers return false, never throw, on malformed input', async () => {
    const proof = await inclusionProof(3, 8, read);
    const cProof = await consistencyProof(3, 8, read);
    const root3 = rootOfLeaves(leaves.slice(0, 3));
    const bad: unknown[] = [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '3', undefined];
    for (const n of bad) {
      const x = n as number;
      expect(verifyInclusion(x, 8, leaves[3], proof, root)).toBe(false);
      expect(verifyInclusion(3, x, leaves[3], proof, root)).toBe(false);
      expect(verifyConsistency(x, 8, cProof, root3, root)).toBe(false);
      expect(verifyConsistency(3, x, cProof, root3, root)).toBe(false);
      expect(verifySubtreeInclusion(x, 0, 8, leaves[3], proof, root)).toBe(false);
      expect(verifySubtreeConsistency(0, 3, x, cProof, root3, root)).toBe(false);
    }
    const garbage: unknown[] = [null, undefined, 'proof', [null], [leaves[0].subarray(1)], [...proof, Buffer.alloc(0)]];
    for (const g of garbage) {
      expect(verifyInclusion(3, 8, leaves[3], g as Buffer[], root)).toBe(false);
      expect(verifyConsistency(3, 8, g as Buffer[], root3, root)).toBe(false);
      expect(verifySubtreeConsistency(0, 3, 8, g as Buffer[], root3, root)).toBe(false);
    }
    expect(verifyInclusion(3, 8, leaves[3].subarray(1), proof, root)).toBe(false);
    expect(verifyInclusion(3, 8, leaves[3], proof, root.subarray(1))).toBe(false);
    expect(verifyInclusion(3, 8, null as unknown as Buffer, proof, root)).toBe(false);
    expect(verifyConsistency(3, 8, cProof, null as unknown as Buffer, root)).toBe(false);
    expect(verifyInclusion(3, 8, leaves[3], proof, root)).toBe(true);
    expect(verifyConsistency(3, 8, cProof, root3, root)).toBe(true);
  });
});

// A virtual tree whose leaves all have the same hash: a perfect subtree's hash then depends on its level only,
// so trees of up to 2^53 - 1 leaves can be served and their roots computed, to exercise the index arithmetic.
describe('trees near 2^53 leaves', () => {
  const LEAF = leafHash(Buffer.from('same'));
  const perfect: Buffer[] = [LEAF];
  for (let level = 1; level <= 53; level++) perfect.push(nodeHash(perfect[level - 1], perfect[level - 1]));
  const read: NodeReader = async (ids) => ids.map((id) => perfect[id.level]);
  const log2 = (powerOfTwo: number): number => powerOfTwo.toString(2).length - 1;
  // Not Math.log2(n): it rounds 2^53 - 1 to 53.
  const rootOf = (n: number): Buffer => {
    const k = largestPow2Below(n);
    if (n === 1 || k * 2 === n) return perfect[log2(n)];
    return nodeHash(perfect[log2(k)], rootOf(n - k));
  };
  const MAX = Number.MAX_SAFE_INTEGER;

  it.each([
    [0, MAX],
    [MAX - 1, MAX],
    [2 ** 52 + 12345, MAX - 7],
    [2 ** 40, 2 ** 52],
  ])('inclusion of leaf %d in a tree of %d', async (index, size) => {
    const proof = await inclusionProof(index, size, read);
    expect(proof.length).toBeLessThanOrEqual(53);
    expect(await treeRootFromNodes(size, read)).toEqual(rootOf(size));
    expect(verifyInclusion(index, size, LEAF, proof, rootOf(size))).toBe(true);
    expect(verifyInclusion(index, size, LEAF, flipByte(proof, 7, 1), rootOf(size))).toBe(false);
  });

  it.each([
    [1, MAX],
    [MAX - 1, MAX],
    [2 ** 52 + 3, MAX],
    [2 ** 52, 2 ** 52 + 1],
  ])('consistency from %d to %d', async (size1, size2) => {
    const proof = await consistencyProof(size1, size2, read);
    expect(verifyConsistency(size1, size2, proof, rootOf(size1), rootOf(size2))).toBe(true);
    expect(verifyConsistency(size1, size2, flipByte(proof, 7, 1), rootOf(size1), rootOf(size2))).toBe(false);
  });
});
