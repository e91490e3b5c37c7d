import { AuditEntry, auditLeafData, ChainFinding, checkAuditChain } from '@dcr/domain';
import {
  leafHash,
  NoteVerifier,
  openNote,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  verifyCosignature,
  verifyInclusion,
} from '@dcr/transparency';

/** The export as `GET /api/v1/applications/<id>/audit/export` answers it. */
export interface AuditExport {
  application_id: string;
  country: string;
  hash_rule?: string;
  leaf_rule?: string;
  entries: AuditEntry[];
  anchor: ExportedAnchor | null;
  inclusion_proofs: Array<{ entry_id: string; leaf_index: number; tree_size: number; proof: string[] }>;
}

export interface ExportedAnchor {
  id: string;
  country: string;
  origin: string;
  merkle_root: string;
  tree_size: number;
  created_at: string;
  checkpoint: string;
  witness_receipts: Array<{ witness: string; signature: string; signed_at: string; cosignature?: string }>;
}

/** A `/.well-known/witness-configuration` document (of the log's country, and of each witness's). */
export interface WitnessConfiguration {
  country?: string;
  log?: { origin: string; checkpoint_keys: Array<{ verifier_key: string }> };
  witness?: { name: string; cosignature_keys: Array<{ verifier_key: string }> };
}

/**
 * How long before an anchor was made an entry may have occurred and still not be in its tree (the
 * entry appended late: the audit trail appends within seconds, this allows for an outage of its
 * consumer). An entry older than that must be proven, or it could have been rewritten with its proof
 * left out (UNPROVEN_GRACE_MS; `--grace-minutes`).
 */
export const UNPROVEN_GRACE_MS = 60 * 60_000;

export interface VerifyOptions {
  /** How many distinct valid witness cosignatures the anchor needs (default 1). */
  minWitnesses?: number;
  /** UNPROVEN_GRACE_MS unless given. */
  unprovenGraceMs?: number;
  /** Anchors as `GET /api/v1/anchors` lists them; each must be validly signed, and the export's anchor must be among them. */
  anchors?: ExportedAnchor[];
}

export type Finding =
  | (ChainFinding & { area: 'chain' })
  | { area: 'inclusion'; kind: 'proof_invalid' | 'proof_missing' | 'leaf_mismatch'; entry_id: string; seq: number; detail: string }
  | { area: 'anchor'; kind: 'unsigned' | 'malformed' | 'mismatch' | 'not_listed'; anchor_id: string; detail: string }
  | { area: 'witness'; kind: 'invalid_cosignature' | 'unknown_witness' | 'too_few_witnesses'; anchor_id: string; detail: string };

export interface VerifyReport {
  valid: boolean;
  application_id: string;
  country: string;
  entries: number;
  /** Entries the newest anchor covers, each proven included in its tree. */
  anchored_entries: number;
  /** The first entry that is not what the trail says, and why; every later entry is untrusted. */
  first_bad_entry: { seq: number; entry_id: string; reason: string } | null;
  untrusted_entry_ids: string[];
  anchor: { id: string; tree_size: number; merkle_root: string; signed_by: string | null; witnesses: string[] } | null;
  findings: Finding[];
}

function hashOf(hex: string): Buffer | null {
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/**
 * The keys that count for an anchor of the log `origin` in `country`. Log keys come only from the
 * configuration that publishes this very origin (another country's log key must not sign this log's
 * checkpoints); witness keys only from the other configurations (a log cannot witness itself, as the
 * publisher never asks it to: its own document's witness key is no independent cosignature).
 */
function verifiersFor(configurations: readonly WitnessConfiguration[], origin: string | null, country: string) {
  const logKeys: NoteVerifier[] = [];
  const witnessKeys: NoteVerifier[] = [];
  const ownWitnessKeys: NoteVerifier[] = [];
  for (const configuration of configurations) {
    const publishesThisLog = origin !== null && configuration.log?.origin === origin;
    const ofThisCountry = configuration.country !== undefined && configuration.country === country;
    if (publishesThisLog && (configuration.country === undefined || ofThisCountry)) {
      for (const key of configuration.log?.checkpoint_keys ?? []) {
        const verifier = parseVerifierKey(key.verifier_key);
        if (verifier.type === 'ed25519') logKeys.push(verifier);
      }
    }
    for (const key of configuration.witness?.cosignature_keys ?? []) {
      const verifier = parseVerifierKey(key.verifier_key);
      if (verifier.type === 'cosignature/v1') (publishesThisLog || ofThisCountry ? ownWitnessKeys : witnessKeys).push(verifier);
    }
  }
  return { logKeys, witnessKeys, ownWitnessKeys };
}

/**
 * Checks an anchor offline: its checkpoint is signed by a key the log of its origin publishes, says
 * what the anchor says (origin, size, root), and carries enough valid cosignatures of other witnesses.
 */
export function checkAnchor(
  anchor: ExportedAnchor,
  configurations: readonly WitnessConfiguration[],
  minWitnesses = 1,
): { findings: Finding[]; signedBy: string | null; witnesses: string[]; root: Buffer | null } {
  const findings: Finding[] = [];
  const fail = (kind: 'unsigned' | 'malformed' | 'mismatch', detail: string) => findings.push({ area: 'anchor', kind, anchor_id: anchor.id, detail });
  let body: string;
  try {
    body = parseNote(anchor.checkpoint).text;
  } catch {
    fail('unsigned', 'the checkpoint is not signed by any published log key');
    fail('malformed', 'the checkpoint is not a signed note');
    return { findings, signedBy: null, witnesses: [], root: null };
  }
  let root: Buffer | null = null;
  let origin: string | null = null;
  let malformedBody: string | null = null;
  try {
    const checkpoint = parseCheckpoint(body);
    root = checkpoint.rootHash;
    origin = checkpoint.origin;
    if (checkpoint.origin !== anchor.origin) fail('mismatch', `checkpoint origin ${checkpoint.origin} is not the anchor's ${anchor.origin}`);
    if (checkpoint.size !== anchor.tree_size) fail('mismatch', `checkpoint size ${checkpoint.size} is not the anchor's tree_size ${anchor.tree_size}`);
    if (checkpoint.rootHash.toString('hex') !== anchor.merkle_root) fail('mismatch', `checkpoint root is not the anchor's merkle_root`);
  } catch (error) {
    malformedBody = `the checkpoint body is not a tlog-checkpoint: ${(error as Error).message}`;
  }
  const { logKeys, witnessKeys, ownWitnessKeys } = verifiersFor(configurations, origin, anchor.country);
  let signedBy: string | null = null;
  try {
    signedBy = openNote(anchor.checkpoint, logKeys).verified[0]?.name ?? null;
  } catch (error) {
    const published = origin === null ? 'no origin' : logKeys.length === 0 ? `no log key published for origin ${origin}` : (error as Error).message;
    fail('unsigned', `the checkpoint is not signed by any published log key (${published})`);
  }
  if (malformedBody !== null) fail('malformed', malformedBody);

  const witnesses = new Set<string>();
  for (const receipt of anchor.witness_receipts) {
    const bytes = Buffer.from(receipt.signature, 'base64');
    const keyId = bytes.subarray(0, 4);
    const matches = (key: NoteVerifier) => key.name === receipt.witness && key.keyId.equals(keyId);
    const verifier = witnessKeys.find(matches);
    if (!verifier) {
      const detail = ownWitnessKeys.some(matches)
        ? `${receipt.witness} is the log's own witness, not an independent one`
        : `no published cosignature key for witness ${receipt.witness}`;
      findings.push({ area: 'witness', kind: 'unknown_witness', anchor_id: anchor.id, detail });
      continue;
    }
    const checked = verifyCosignature(verifier, body, { name: receipt.witness, keyId, signature: bytes.subarray(4), line: `\u2014 ${receipt.witness} ${receipt.signature}\n` });
    if (!checked) {
      findings.push({ area: 'witness', kind: 'invalid_cosignature', anchor_id: anchor.id, detail: `the cosignature of ${receipt.witness} does not verify` });
      continue;
    }
    witnesses.add(receipt.witness);
  }
  if (witnesses.size < minWitnesses) {
    findings.push({ area: 'witness', kind: 'too_few_witnesses', anchor_id: anchor.id, detail: `${witnesses.size} valid witness cosignature(s), ${minWitnesses} required` });
  }
  return { findings, signedBy, witnesses: [...witnesses], root };
}

/** When the newest of `anchors` was made (ms), or undefined without any. */
function newestAnchorTime(anchors: readonly ExportedAnchor[] | undefined): number | undefined {
  const times = (anchors ?? []).map((listed) => Date.parse(listed.created_at)).filter((time) => !Number.isNaN(time));
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** Whether `entry` occurred more than `grace` ms before `at` (an entry whose time cannot be read counts as old: it proves nothing). */
function occurredLongBefore(entry: AuditEntry, at: number, grace: number): boolean {
  const occurred = Date.parse(entry.occurred_at);
  return Number.isNaN(occurred) || occurred < at - grace;
}

function reasonOf(finding: Finding): string {
  switch (finding.area) {
    case 'chain':
      switch (finding.kind) {
        case 'hash_mismatch':
          return 'its hash does not match its content (the entry was edited)';
        case 'broken_link':
          return 'its prev_hash is not the hash of the entry before it (an entry before it was edited or replaced)';
        case 'missing_entries':
          return `entries ${finding.after_seq + 1}..${finding.next_seq - 1} are missing (removed)`;
        case 'bad_first_seq':
          return 'the chain does not start at seq 1 (its first entries are missing)';
        case 'out_of_order':
          return 'seq goes backwards';
      }
      break;
    case 'inclusion':
      return finding.kind === 'proof_missing'
        ? `its inclusion proof is missing (${finding.detail})`
        : `it is not in the anchored tree (${finding.detail})`;
    default:
      return finding.detail;
  }
}

/**
 * Recomputes an export: every hash and link of the application's chain, every entry's inclusion in
 * the anchored tree, the anchor's signature and its witnesses' cosignatures. Names the first bad
 * entry and marks every later one untrusted. Only a checkpoint signed by a published key of the log
 * proves anything, so entries count as anchored only then.
 */
export function verifyAuditExport(exported: AuditExport, configurations: readonly WitnessConfiguration[], options: VerifyOptions = {}): VerifyReport {
  const findings: Finding[] = [];
  const entries = exported.entries;
  const chain = checkAuditChain(entries);
  findings.push(...chain.findings.map((finding) => ({ ...finding, area: 'chain' as const })));

  /** Chain findings that name the entry at `index` itself (not its successor's link to it). */
  const chainFindingsOn = (index: number) =>
    findings.filter(
      (finding) =>
        finding.area === 'chain' &&
        (('entry_id' in finding && finding.entry_id === entries[index].entry_id) || ('next_seq' in finding && finding.next_seq === entries[index].seq)),
    );
  /** The broken link of the successor of the entry at `index`, when that is what makes it bad. */
  const successorBreak = (index: number) =>
    index + 1 < entries.length
      ? findings.find((finding) => finding.area === 'chain' && finding.kind === 'broken_link' && finding.entry_id === entries[index + 1].entry_id)
      : undefined;

  // The chain's own first bad entry, by position (entry ids are not trusted to be unique).
  let chainFirst = chain.first_bad_seq === null ? null : entries.length - chain.untrusted_entry_ids.length;
  let anchorSummary: VerifyReport['anchor'] = null;
  let anchored = 0;
  const badIndexes: number[] = [];
  const grace = options.unprovenGraceMs ?? UNPROVEN_GRACE_MS;

  if (exported.anchor) {
    const anchor = exported.anchor;
    const checked = checkAnchor(anchor, configurations, options.minWitnesses ?? 1);
    findings.push(...checked.findings);
    if (anchor.country !== exported.country) {
      findings.push({ area: 'anchor', kind: 'mismatch', anchor_id: anchor.id, detail: `the anchor is of ${anchor.country}, the export of ${exported.country}` });
    }
    anchorSummary = { id: anchor.id, tree_size: anchor.tree_size, merkle_root: anchor.merkle_root, signed_by: checked.signedBy, witnesses: checked.witnesses };
    if (options.anchors && !options.anchors.some((listed) => listed.id === anchor.id && listed.merkle_root === anchor.merkle_root && listed.tree_size === anchor.tree_size)) {
      findings.push({ area: 'anchor', kind: 'not_listed', anchor_id: anchor.id, detail: 'the export\'s anchor is not among the published anchors' });
    }
    const signed = checked.signedBy !== null;
    const root = checked.root ?? hashOf(anchor.merkle_root);
    const proofs = new Map(exported.inclusion_proofs.map((proof) => [proof.entry_id, proof]));
    const proven = new Set<number>();
    // The newest anchor known: the export's, or a newer published one (an export against an older
    // anchor leaves the entries since it unproven, and they must not pass as not anchored yet).
    const newestListed = newestAnchorTime(options.anchors);
    const anchoredAt = Math.max(Date.parse(anchor.created_at), newestListed ?? -Infinity);
    entries.forEach((entry, index) => {
      const proof = proofs.get(entry.entry_id);
      if (!proof) {
        // Entries are appended in seq order, so one before a proven entry was in the anchored tree too.
        if (entries.slice(index + 1).some((later) => proofs.has(later.entry_id))) {
          findings.push({ area: 'inclusion', kind: 'proof_missing', entry_id: entry.entry_id, seq: entry.seq, detail: 'a later entry is anchored, so this one must be too' });
          badIndexes.push(index);
        } else if (occurredLongBefore(entry, anchoredAt, grace)) {
          // Else a rewritten tail whose proofs were left out would pass as not anchored yet.
          findings.push({ area: 'inclusion', kind: 'proof_missing', entry_id: entry.entry_id, seq: entry.seq, detail: `it occurred at ${entry.occurred_at}, more than ${grace / 60_000} minutes before the newest anchor was made (${new Date(anchoredAt).toISOString()}), so the anchored tree must hold it` });
          badIndexes.push(index);
        }
        return;
      }
      if (proof.tree_size !== anchor.tree_size) {
        findings.push({ area: 'inclusion', kind: 'proof_invalid', entry_id: entry.entry_id, seq: entry.seq, detail: 'the proof is for another tree size' });
        badIndexes.push(index);
        return;
      }
      const leafData = hashOf(entry.hash);
      const hashes = proof.proof.map(hashOf);
      const ok =
        root !== null &&
        leafData !== null &&
        hashes.every((hash) => hash !== null) &&
        verifyInclusion(proof.leaf_index, proof.tree_size, leafHash(auditLeafData(entry.hash)), hashes as Buffer[], root);
      if (ok) {
        proven.add(index);
        if (signed) anchored += 1;
      } else {
        findings.push({ area: 'inclusion', kind: 'proof_invalid', entry_id: entry.entry_id, seq: entry.seq, detail: `leaf ${proof.leaf_index} of tree ${proof.tree_size}` });
        badIndexes.push(index);
      }
    });
    if (options.anchors) {
      for (const listed of options.anchors) {
        if (listed.id === anchor.id) continue;
        findings.push(...checkAnchor(listed, configurations, options.minWitnesses ?? 1).findings);
      }
    }
    // The chain blames an entry whose sealed successor does not link to it; a clean, signed anchor that
    // proves the entry itself clears it, and the blame moves to the successor.
    if (chainFirst !== null && signed && !findings.some((finding) => finding.area === 'anchor' || finding.area === 'witness') && proven.has(chainFirst) && chainFindingsOn(chainFirst).length === 0 && successorBreak(chainFirst)) {
      chainFirst += 1;
    }
  }
  else if (options.anchors && options.anchors.length > 0) {
    // No anchor in the export, yet the log was anchored well after some of its entries: they must be proven.
    const newest = newestAnchorTime(options.anchors)!;
    entries.forEach((entry, index) => {
      if (!occurredLongBefore(entry, newest, grace)) return;
      findings.push({ area: 'inclusion', kind: 'proof_missing', entry_id: entry.entry_id, seq: entry.seq, detail: `the export names no anchor, yet the log was anchored more than ${grace / 60_000} minutes after it occurred (${entry.occurred_at})` });
      badIndexes.push(index);
    });
  }
  if (chainFirst !== null) badIndexes.push(chainFirst);

  const firstIndex = badIndexes.length > 0 ? Math.min(...badIndexes) : null;
  let firstBad: VerifyReport['first_bad_entry'] = null;
  if (firstIndex !== null) {
    const entry = entries[firstIndex];
    const finding =
      chainFindingsOn(firstIndex)[0] ??
      (successorBreak(firstIndex)
        ? undefined
        : findings.find((candidate) => candidate.area === 'inclusion' && candidate.entry_id === entry.entry_id));
    const reason = finding
      ? reasonOf(finding)
      : successorBreak(firstIndex)
        ? 'the next entry\'s prev_hash is not its hash (it was edited and its hash recomputed, or replaced)'
        : 'invalid';
    firstBad = { seq: entry.seq, entry_id: entry.entry_id, reason };
  }
  return {
    valid: findings.length === 0,
    application_id: exported.application_id,
    country: exported.country,
    entries: entries.length,
    anchored_entries: anchored,
    first_bad_entry: firstBad,
    untrusted_entry_ids: firstIndex === null ? [] : entries.slice(firstIndex).map((entry) => entry.entry_id),
    anchor: anchorSummary,
    findings,
  };
}
