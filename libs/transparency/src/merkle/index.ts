/**
 * RFC 6962 / RFC 9162 Merkle trees for a transparency log, in the style of transparency-dev/merkle: hashing,
 * compact ranges for appending, proof generation from stored perfect-subtree nodes, and verification of
 * inclusion, consistency and (draft-ietf-plants-merkle-tree-certs) subtree proofs.
 */
export { HASH_SIZE, emptyRoot, leafHash, nodeHash, rootOfLeaves } from './hashing';
export type { NodeId } from './range';
export { nodeKey, nodeCoverage, rangeNodes, isValidSubtree } from './range';
export type { NodeReader } from './node-reader';
export type { CompletedNode } from './compact-range';
export { CompactRange } from './compact-range';
export {
  treeRootFromNodes,
  subtreeRootFromNodes,
  inclusionProof,
  consistencyProof,
  subtreeInclusionProof,
  subtreeConsistencyProof,
} from './proofs';
export { verifyInclusion, verifyConsistency, rootFromInclusionProof } from './verify';
export { verifySubtreeInclusion, verifySubtreeConsistency } from './subtree';
