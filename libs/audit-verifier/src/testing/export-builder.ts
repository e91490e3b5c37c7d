/**
 * Test support (not built into dist): builds audit exports the way the audit-chain service does, so
 * the verifier's specs can check realistic exports and tamper with them.
 */
import { AUDIT_HASH_RULE, AUDIT_LEAF_RULE, AuditEntry, auditLeafData, auditPayloadDigest, sealAuditEntry } from '@dcr/domain';
import {
  CompactRange,
  Cosigner,
  cosignerFromSeed,
  formatCheckpoint,
  inclusionProof,
  leafHash,
  NodeReader,
  nodeKey,
  NoteSigner,
  noteSignerFromSeed,
  signNote,
} from '@dcr/transparency';
import { AuditExport, ExportedAnchor, WitnessConfiguration } from '../verify-export';

/** One country's audit-chain keys and its `/.well-known/witness-configuration` document. */
export interface TestCountry {
  code: string;
  origin: string;
  logSigner: NoteSigner;
  cosigner: Cosigner;
  configuration: WitnessConfiguration;
}

/** Deterministic keys for a country (seeded by `seed`), named as the service names them. */
export function testCountry(code: string, seed: number): TestCountry {
  const cc = code.toLowerCase();
  const origin = `dcr.test/audit/${cc}`;
  const logSigner = noteSignerFromSeed(origin, Buffer.alloc(32, seed));
  const cosigner = cosignerFromSeed(`dcr.test/witness/${cc}`, Buffer.alloc(32, seed + 128));
  return {
    code,
    origin,
    logSigner,
    cosigner,
    configuration: {
      log: { origin, checkpoint_keys: [{ verifier_key: logSigner.verifierKey }] },
      witness: { name: cosigner.name, cosignature_keys: [{ verifier_key: cosigner.verifierKey }] },
    },
  };
}

const EVENT_TYPES = ['application.submitted', 'document.uploaded', 'decision.recorded', 'payment.received'];

/** A sealed chain of `count` entries of one application. */
export function buildChain(applicationId: string, count: number, startMs = Date.UTC(2025, 0, 1)): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const previous = entries[entries.length - 1] ?? null;
    entries.push(
      sealAuditEntry(
        {
          entry_id: `aud_${applicationId}_${i + 1}`,
          event_type: EVENT_TYPES[i % EVENT_TYPES.length],
          actor: i % 3 === 0 ? { type: 'system' } : { type: 'officer', id: `officer-${i % 2}` },
          occurred_at: new Date(startMs + i * 60_000).toISOString(),
          payload_digest: auditPayloadDigest({ application_id: applicationId, step: i + 1 }),
        },
        previous,
      ),
    );
  }
  return entries;
}

/** A country's tree: every leaf, the stored perfect-subtree nodes and a reader over them. */
export interface TestTree {
  leaves: AuditEntry[];
  nodes: Map<string, Buffer>;
  read: NodeReader;
  /** The root of the tree of every size 0..leaves.length, from the CompactRange as it grew. */
  roots: Buffer[];
}

/** Appends the entries' hashes (leaf data = the 32 bytes of the hash) to a tree, as the appender does. */
export function buildTree(leaves: readonly AuditEntry[]): TestTree {
  const nodes = new Map<string, Buffer>();
  const range = new CompactRange(0, []);
  const roots = [range.root()];
  for (const entry of leaves) {
    for (const node of range.append(leafHash(auditLeafData(entry.hash)))) nodes.set(nodeKey(node), node.hash);
    roots.push(range.root());
  }
  const read: NodeReader = async (ids) =>
    ids.map((id) => {
      const hash = nodes.get(nodeKey(id));
      if (!hash) throw new Error(`node ${nodeKey(id)} is not stored`);
      return hash;
    });
  return { leaves: [...leaves], nodes, read, roots };
}

/** Interleaves chains into one country's leaf order: one entry of each chain in turn. */
export function interleave(...chains: AuditEntry[][]): AuditEntry[] {
  const leaves: AuditEntry[] = [];
  for (let i = 0; chains.some((chain) => i < chain.length); i += 1) {
    for (const chain of chains) if (i < chain.length) leaves.push(chain[i]);
  }
  return leaves;
}

/** The base64 `keyID || signature` of a receipt, as the publisher stores it. */
export function receiptSignature(signature: { keyId: Buffer; signature: Buffer }): string {
  return Buffer.concat([signature.keyId, signature.signature]).toString('base64');
}

export interface AnchorSpec {
  id?: string;
  country: string;
  origin: string;
  size: number;
  root: Buffer;
  /** Signs the checkpoint (the log key, or a forger's). */
  logSigners: NoteSigner[];
  witnesses?: Cosigner[];
  /** POSIX seconds of the cosignatures. */
  timestamp?: number;
}

/** An anchor as the publisher leaves it: the signed checkpoint, each cosignature appended and recorded as a receipt. */
export function buildAnchor(spec: AnchorSpec): ExportedAnchor {
  const timestamp = spec.timestamp ?? Date.UTC(2025, 0, 2) / 1000;
  const body = formatCheckpoint({ origin: spec.origin, size: spec.size, rootHash: spec.root, extensions: [] });
  let checkpoint = signNote(body, spec.logSigners);
  const witness_receipts: ExportedAnchor['witness_receipts'] = [];
  for (const cosigner of spec.witnesses ?? []) {
    const signature = cosigner.cosign(body, timestamp);
    checkpoint += `${signature.line}\n`;
    witness_receipts.push({
      witness: cosigner.name,
      signature: receiptSignature(signature),
      signed_at: new Date(timestamp * 1000).toISOString(),
      cosignature: signature.line,
    });
  }
  return {
    id: spec.id ?? `anc_${spec.size}`,
    country: spec.country,
    origin: spec.origin,
    merkle_root: spec.root.toString('hex'),
    tree_size: spec.size,
    created_at: new Date(timestamp * 1000).toISOString(),
    checkpoint,
    witness_receipts,
  };
}

/** The export of one application, with an inclusion proof for each of its entries below the anchor's size. */
export async function buildExport(
  applicationId: string,
  country: string,
  chain: readonly AuditEntry[],
  tree: TestTree,
  anchor: ExportedAnchor | null,
): Promise<AuditExport> {
  const inclusion_proofs: AuditExport['inclusion_proofs'] = [];
  if (anchor) {
    for (const entry of chain) {
      const leafIndex = tree.leaves.findIndex((leaf) => leaf.entry_id === entry.entry_id);
      if (leafIndex < 0 || leafIndex >= anchor.tree_size) continue;
      const proof = await inclusionProof(leafIndex, anchor.tree_size, tree.read);
      inclusion_proofs.push({ entry_id: entry.entry_id, leaf_index: leafIndex, tree_size: anchor.tree_size, proof: proof.map((hash) => hash.toString('hex')) });
    }
  }
  return {
    application_id: applicationId,
    country,
    hash_rule: AUDIT_HASH_RULE,
    leaf_rule: AUDIT_LEAF_RULE,
    entries: chain.map((entry) => ({ ...entry, actor: { ...entry.actor } })),
    anchor,
    inclusion_proofs,
  };
}

/** The usual scene: country XA's log, witnessed by country XB; applications app-a (7 entries) and app-b (5). */
export async function standardScene(options: { anchorSize?: number; lengthA?: number; lengthB?: number } = {}) {
  const log = testCountry('XA', 1);
  const witness = testCountry('XB', 2);
  const chainA = buildChain('app-a', options.lengthA ?? 7);
  const chainB = buildChain('app-b', options.lengthB ?? 5, Date.UTC(2025, 0, 1, 0, 0, 30));
  const tree = buildTree(interleave(chainA, chainB));
  const size = options.anchorSize ?? tree.leaves.length;
  // An anchor of part of the tree is made just after its last leaf, before the leaves it leaves out.
  const timestamp = size < tree.leaves.length ? Math.floor(Date.parse(tree.leaves[size - 1].occurred_at) / 1000) + 5 : undefined;
  const anchor = buildAnchor({ country: log.code, origin: log.origin, size, root: tree.roots[size], logSigners: [log.logSigner], witnesses: [witness.cosigner], timestamp });
  const exported = await buildExport('app-a', log.code, chainA, tree, anchor);
  return { log, witness, chainA, chainB, tree, anchor, exported, configurations: [log.configuration, witness.configuration] };
}
