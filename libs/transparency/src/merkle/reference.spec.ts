import { createHash } from 'node:crypto';
import { CompactRange } from './compact-range';
import { emptyRoot, leafHash, nodeHash, rootOfLeaves } from './hashing';
import type { NodeReader } from './node-reader';
import {
  consistencyProof,
  inclusionProof,
  subtreeConsistencyProof,
  subtreeInclusionProof,
  subtreeRootFromNodes,
  treeRootFromNodes,
} from './proofs';
import { isValidSubtree, nodeKey } from './range';
import { verifySubtreeConsistency, verifySubtreeInclusion } from './subtree';
import { verifyConsistency, verifyInclusion } from './verify';

// Fixed values published elsewhere, so that generation is checked against more than this code's own verifier.

const hex = (h: Uint8Array): string => Buffer.from(h).toString('hex');
const hexes = (hs: readonly Uint8Array[]): string[] => hs.map(hex);

function storeReader(leafHashes: readonly Buffer[]): NodeReader {
  const store = new Map<string, Buffer>();
  const range = new CompactRange(0, []);
  for (const h of leafHashes) for (const node of range.append(h)) store.set(nodeKey(node), node.hash);
  return async (ids) =>
    ids.map((id) => {
      const hash = store.get(nodeKey(id));
      if (!hash) throw new Error(`no node ${nodeKey(id)}`);
      return hash;
    });
}

describe('RFC 6962 hashing', () => {
  it('has the SHA-256 empty root', () => {
    expect(hex(emptyRoot())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(rootOfLeaves([]))).toBe(hex(emptyRoot()));
  });

  it('prefixes leaves with 0x00 and nodes with 0x01', () => {
    expect(hex(leafHash(Buffer.alloc(0)))).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    const l = Buffer.alloc(32, 0xaa);
    const r = Buffer.alloc(32, 0xbb);
    const expected = createHash('sha256').update(Buffer.concat([Buffer.from([1]), l, r])).digest();
    expect(hex(nodeHash(l, r))).toBe(hex(expected));
  });
});

// The 8-leaf reference tree of the certificate-transparency tests, as transparency-dev/merkle's
// proof/verify_test.go publishes it: leaf data, the roots of sizes 1..8, audit paths and consistency proofs.
describe('RFC 6962 reference tree (certificate-transparency test data)', () => {
  const leafData = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
  const roots = [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
    '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
    'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
    '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
  ];
  const leaves = leafData.map((d) => leafHash(Buffer.from(d, 'hex')));
  const read = storeReader(leaves);

  it.each(roots.map((root, i) => [i + 1, root] as const))('root of size %d', async (size, root) => {
    expect(hex(rootOfLeaves(leaves.slice(0, size)))).toBe(root);
    expect(hex(await treeRootFromNodes(size, read))).toBe(root);
    const range = new CompactRange(0, []);
    leaves.slice(0, size).forEach((h) => range.append(h));
    expect(hex(range.root())).toBe(root);
  });

  const inclusion: Array<[index: number, size: number, proof: string[]]> = [
    [0, 1, []],
    [
      0,
      8,
      [
        '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
      ],
    ],
    [
      5,
      8,
      [
        'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
        'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
        'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      ],
    ],
    [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
    [
      1,
      5,
      [
        '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      ],
    ],
  ];

  it.each(inclusion)('inclusion proof of leaf %d in size %d', async (index, size, proof) => {
    expect(hexes(await inclusionProof(index, size, read))).toEqual(proof);
    const hashes = proof.map((h) => Buffer.from(h, 'hex'));
    expect(verifyInclusion(index, size, leaves[index], hashes, Buffer.from(roots[size - 1], 'hex'))).toBe(true);
  });

  const consistency: Array<[size1: number, size2: number, proof: string[]]> = [
    [1, 1, []],
    [
      1,
      8,
      [
        '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
      ],
    ],
    [
      6,
      8,
      [
        '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
        'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
        'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      ],
    ],
    [
      2,
      5,
      [
        '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
        'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      ],
    ],
    [
      6,
      7,
      [
        '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
        'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
        'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      ],
    ],
  ];

  it.each(consistency)('consistency proof from size %d to %d', async (size1, size2, proof) => {
    expect(hexes(await consistencyProof(size1, size2, read))).toEqual(proof);
    const hashes = proof.map((h) => Buffer.from(h, 'hex'));
    const root1 = Buffer.from(roots[size1 - 1], 'hex');
    const root2 = Buffer.from(roots[size2 - 1], 'hex');
    expect(verifyConsistency(size1, size2, hashes, root1, root2)).toBe(true);
  });
});

// The "Subtree Test Vectors" appendix of draft-ietf-plants-merkle-tree-certs, as transparency-dev/merkle's
// testonly/vectors_test.go reproduces them: a rolling SHA-256 over one text line per valid subtree of the tree
// whose leaf i is the single byte i, for trees of up to 130 leaves. Every generated proof is verified as well.
describe('draft-ietf-plants-merkle-tree-certs subtree test vectors', () => {
  const MAX = 130;
  const leaves = Array.from({ length: MAX }, (_, i) => leafHash(Buffer.from([i])));
  const read = storeReader(leaves);
  const validSubtrees = (end: number): number[] =>
    Array.from({ length: end }, (_, start) => start).filter((start) => isValidSubtree(start, end));
  const proofLine = (prefix: string, proof: readonly Buffer[]): string =>
    `${prefix}${proof.map((h) => ` ${hex(h)}`).join('')}\n`;

  it('subtree hashes', async () => {
    const digest = createHash('sha256');
    for (let end = 1; end <= MAX; end++) {
      for (const start of validSubtrees(end)) {
        const hash = await subtreeRootFromNodes(start, end, read);
        expect(hex(hash)).toBe(hex(rootOfLeaves(leaves.slice(start, end))));
        digest.update(`[${start}, ${end}) ${hex(hash)}\n`);
      }
    }
    expect(digest.digest('hex')).toBe('94a95384a8c69acea9b50d035a58285b3a777cb7a724005faa5e1f1e1190007f');
  });

  it('subtree inclusion proofs', async () => {
    const digest = createHash('sha256');
    for (let end = 1; end <= MAX; end++) {
      for (const start of validSubtrees(end)) {
        const root = rootOfLeaves(leaves.slice(start, end));
        for (let index = start; index < end; index++) {
          const proof = await subtreeInclusionProof(index, start, end, read);
          expect(verifySubtreeInclusion(index, start, end, leaves[index], proof, root)).toBe(true);
          digest.update(proofLine(`${index} [${start}, ${end})`, proof));
        }
      }
    }
    expect(digest.digest('hex')).toBe('ac2a8f989e44d99e399db448050ff5f19757df53cfb716aa81015d3955d8163f');
  });

  it('subtree consistency proofs', async () => {
    const digest = createHash('sha256');
    const roots = Array.from({ length: MAX + 1 }, (_, n) => rootOfLeaves(leaves.slice(0, n)));
    for (let size = 0; size <= MAX; size++) {
      for (let end = 1; end <= size; end++) {
        for (const start of validSubtrees(end)) {
          const proof = await subtreeConsistencyProof(start, end, size, read);
          const subtreeRoot = rootOfLeaves(leaves.slice(start, end));
          if (!verifySubtreeConsistency(start, end, size, proof, subtreeRoot, roots[size])) {
            throw new Error(`[${start}, ${end}) ${size} does not verify`);
          }
          digest.update(proofLine(`[${start}, ${end}) ${size}`, proof));
        }
      }
    }
    expect(digest.digest('hex')).toBe('c586ebbb73a5621baf2140095d87dde934e3b6503a562a1a5215b8209edd083d');
  });
});
