import fc from 'fast-check';
import { CompactRange } from './compact-range';
import { emptyRoot, leafHash, rootOfLeaves } from './hashing';
import { nodeCoverage, rangeNodes } from './range';

const leavesArb = (maxLength: number) =>
  fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength }).map((data) => data.map((d) => leafHash(d)));

describe('rangeNodes', () => {
  it('covers [begin, end) exactly with aligned perfect subtrees, sizes rising then falling', () => {
    fc.assert(
      fc.property(fc.nat({ max: 5000 }), fc.nat({ max: 5000 }), (a, b) => {
        const [begin, end] = a <= b ? [a, b] : [b, a];
        const nodes = rangeNodes(begin, end);
        let pos = begin;
        for (const node of nodes) {
          const [from, to] = nodeCoverage(node);
          expect(from).toBe(pos);
          pos = to;
        }
        expect(pos).toBe(end);
        // Minimal: never two neighbours that are siblings and could merge into their parent.
        nodes.slice(1).forEach((node, i) => {
          const left = nodes[i];
          expect(left.level === node.level && left.index % 2 === 0).toBe(false);
        });
        // Sizes rise, then fall (at most two equal at the peak).
        const levels = nodes.map((n) => n.level);
        const peak = levels.indexOf(Math.max(...levels));
        levels.slice(0, peak).forEach((l, i) => expect(l).toBeLessThan(levels[i + 1]));
        levels.slice(peak + 1).forEach((l, i) => expect(l).toBeLessThanOrEqual(levels[peak + i]));
        levels.slice(peak + 2).forEach((l, i) => expect(l).toBeLessThan(levels[peak + 1 + i]));
      }),
    );
  });

  it('gives the edge of a tree as its perfect subtrees, largest first', () => {
    expect(rangeNodes(0, 0)).toEqual([]);
    expect(rangeNodes(0, 13)).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(rangeNodes(3, 13)).toEqual([
      { level: 0, index: 3 },
      { level: 2, index: 1 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(rangeNodes(0, 2 ** 53 - 1)).toHaveLength(53);
  });

  it.each([
    [-1, 2],
    [1.5, 3],
    [0, 2 ** 53],
    [3, 2],
    [Number.NaN, 1],
  ])('rejects [%p, %p) with a RangeError', (begin, end) => {
    expect(() => rangeNodes(begin, end)).toThrow(RangeError);
  });
});

describe('CompactRange', () => {
  it('has the root of rootOfLeaves at every size, and reports every completed node with its true hash', () => {
    fc.assert(
      fc.property(leavesArb(300), (leaves) => {
        const range = new CompactRange(0, []);
        expect(range.root()).toEqual(emptyRoot());
        leaves.forEach((leaf, i) => {
          const completed = range.append(leaf);
          expect(completed[0]).toEqual({ level: 0, index: i, hash: leaf });
          for (const node of completed) {
            const [from, to] = nodeCoverage(node);
            expect(to).toBe(i + 1);
            expect(node.hash).toEqual(rootOfLeaves(leaves.slice(from, to)));
          }
          expect(range.size).toBe(i + 1);
          expect(range.edge()).toHaveLength(CompactRange.edgeIds(i + 1).length);
          expect(range.root()).toEqual(rootOfLeaves(leaves.slice(0, i + 1)));
        });
      }),
      { numRuns: 30 },
    );
  });

  it('continues identically when rebuilt from edge()', () => {
    fc.assert(
      fc.property(leavesArb(300), fc.nat(), (leaves, cut) => {
        const split = leaves.length === 0 ? 0 : cut % (leaves.length + 1);
        const original = new CompactRange(0, []);
        leaves.slice(0, split).forEach((leaf) => original.append(leaf));
        const rebuilt = new CompactRange(original.size, original.edge());
        expect(rebuilt.root()).toEqual(original.root());
        for (const leaf of leaves.slice(split)) expect(rebuilt.append(leaf)).toEqual(original.append(leaf));
        expect(rebuilt.edge()).toEqual(original.edge());
        expect(rebuilt.root()).toEqual(rootOfLeaves(leaves));
      }),
      { numRuns: 50 },
    );
  });

  it('edge hashes line up with edgeIds', () => {
    const leaves = Array.from({ length: 11 }, (_, i) => leafHash(Buffer.from([i])));
    const range = new CompactRange(0, []);
    leaves.forEach((leaf) => range.append(leaf));
    const ids = CompactRange.edgeIds(11);
    expect(ids).toEqual(rangeNodes(0, 11));
    range.edge().forEach((hash, i) => {
      const [from, to] = nodeCoverage(ids[i]);
      expect(hash).toEqual(rootOfLeaves(leaves.slice(from, to)));
    });
  });

  it('does not let callers change its state through returned buffers', () => {
    const range = new CompactRange(0, []);
    const [leafNode] = range.append(leafHash(Buffer.from('a')));
    const root = range.root();
    leafNode.hash.fill(0);
    range.edge()[0].fill(0);
    expect(range.root()).toEqual(root);
  });

  it('rejects an edge that does not match the size, and malformed hashes', () => {
    const h = leafHash(Buffer.from('x'));
    expect(() => new CompactRange(3, [h])).toThrow(RangeError);
    expect(() => new CompactRange(0, [h])).toThrow(RangeError);
    expect(() => new CompactRange(2, [h, h])).toThrow(RangeError);
    expect(() => new CompactRange(1, [Buffer.alloc(31)])).toThrow(RangeError);
    expect(() => new CompactRange(-1, [])).toThrow(RangeError);
    expect(() => new CompactRange(0.5, [])).toThrow(RangeError);
    expect(() => new CompactRange(0, []).append(Buffer.alloc(33))).toThrow(RangeError);
    expect(new CompactRange(3, [h, h]).size).toBe(3);
  });
});
