import { emptyRoot, isHash, nodeHash } from './hashing';
import { NodeId, nodeKey, rangeNodes } from './range';

/** Reads stored perfect-subtree hashes, in the order asked (a store answers with one query). */
export type NodeReader = (ids: readonly NodeId[]) => Promise<readonly Uint8Array[]>;

/** A run of leaves [begin, end); every one used here is a valid subtree (see isValidSubtree). */
export type LeafRange = readonly [begin: number, end: number];

/**
 * The hashes of the given leaf ranges, computed from stored perfect-subtree nodes fetched with a single read
 * (deduplicated ids): a store answers one IN-query much faster than log n round trips. Each range must be a
 * valid subtree, so that its hash is its compact range folded from the right. No read at all when there is
 * nothing to read, so a store never sees an empty query.
 */
export async function hashRanges(ranges: readonly LeafRange[], read: NodeReader): Promise<Buffer[]> {
  const plans = ranges.map(([begin, end]) => rangeNodes(begin, end));
  const unique = new Map<string, NodeId>();
  for (const plan of plans) {
    for (const id of plan) if (!unique.has(nodeKey(id))) unique.set(nodeKey(id), { ...id });
  }

  const stored = new Map<string, Uint8Array>();
  if (unique.size > 0) {
    const ids = [...unique.values()];
    const answer = await read(ids);
    if (!answer || answer.length !== ids.length) {
      throw new Error(`node reader answered ${answer?.length ?? 'nothing'} hashes for ${ids.length} nodes`);
    }
    ids.forEach((id, i) => {
      if (!isHash(answer[i])) throw new Error(`node reader answered a malformed hash for node ${nodeKey(id)}`);
      stored.set(nodeKey(id), answer[i]);
    });
  }

  return plans.map((plan) => {
    if (plan.length === 0) return emptyRoot();
    const hashes = plan.map((id) => stored.get(nodeKey(id)) as Uint8Array);
    let hash: Buffer = Buffer.from(hashes[hashes.length - 1]);
    for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i], hash);
    return hash;
  });
}
