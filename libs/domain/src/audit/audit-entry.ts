import { hash } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../flows/canonical-json';

/** The `prev_hash` of an application's first entry in a country. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

export interface AuditActorValue {
  type: string;
  id?: string;
}

/** An audit entry exactly as the contract fixes it. */
export interface AuditEntry {
  seq: number;
  entry_id: string;
  event_type: string;
  actor: AuditActorValue;
  occurred_at: string;
  payload_digest: string;
  prev_hash: string;
  hash: string;
}

export type UnhashedAuditEntry = Omit<AuditEntry, 'hash'>;

/** The hashing rule, in words, as every export states it so that an auditor can recompute it. */
export const AUDIT_HASH_RULE =
  'hash = lower-case hex SHA-256 of the RFC 8785 (JCS) canonical JSON bytes of the entry object without ' +
  'its "hash" field, that is of {seq, entry_id, event_type, actor, occurred_at, payload_digest, prev_hash}; ' +
  'prev_hash is the hash of the entry with seq - 1 of the same application in the same country, and 64 zeros ' +
  'for seq 1; seq starts at 1 and has no gaps; payload_digest is the lower-case hex SHA-256 of the RFC 8785 ' +
  'bytes of the event payload.';

/** How entries become leaves of the country's Merkle tree. */
export const AUDIT_LEAF_RULE =
  'Every entry of the country (all applications) is one leaf, in leaf_index order; leaf hash = SHA-256(0x00 || ' +
  'the 32 bytes of the entry hash); interior node = SHA-256(0x01 || left || right); the tree and its inclusion ' +
  'and consistency proofs are those of RFC 6962 section 2.1 / RFC 9162 section 2.1. Anchors are C2SP ' +
  'tlog-checkpoint signed notes over (origin, tree size, base64 root hash).';

/** Lower-case hex SHA-256 of the RFC 8785 bytes of a payload. */
export function auditPayloadDigest(payload: unknown): string {
  return canonicalDigest(payload);
}

/** The hash of an entry: SHA-256 over the RFC 8785 bytes of the seven other fields. */
export function auditEntryHash(entry: UnhashedAuditEntry): string {
  const hashed: UnhashedAuditEntry = {
    seq: entry.seq,
    entry_id: entry.entry_id,
    event_type: entry.event_type,
    actor: entry.actor,
    occurred_at: entry.occurred_at,
    payload_digest: entry.payload_digest,
    prev_hash: entry.prev_hash,
  };
  return hash('sha256', canonicalJson(hashed), 'hex');
}

/** Links a new entry to its predecessor's hash and seals it. */
export function sealAuditEntry(fields: Omit<UnhashedAuditEntry, 'prev_hash' | 'seq'>, previous: { seq: number; hash: string } | null): AuditEntry {
  const unhashed: UnhashedAuditEntry = {
    seq: previous ? previous.seq + 1 : 1,
    entry_id: fields.entry_id,
    event_type: fields.event_type,
    actor: fields.actor.id === undefined ? { type: fields.actor.type } : { type: fields.actor.type, id: fields.actor.id },
    occurred_at: fields.occurred_at,
    payload_digest: fields.payload_digest,
    prev_hash: previous ? previous.hash : GENESIS_PREV_HASH,
  };
  return { ...unhashed, hash: auditEntryHash(unhashed) };
}

/** The Merkle leaf data of an entry: the 32 bytes its hex hash stands for. */
export function auditLeafData(entryHash: string): Buffer {
  if (!/^[0-9a-f]{64}$/.test(entryHash)) throw new RangeError('an entry hash is 64 lower-case hex characters');
  return Buffer.from(entryHash, 'hex');
}

export type ChainFinding =
  | { kind: 'hash_mismatch'; seq: number; entry_id: string; expected: string; found: string }
  | { kind: 'broken_link'; seq: number; entry_id: string; expected: string; found: string }
  | { kind: 'missing_entries'; after_seq: number; next_seq: number }
  | { kind: 'bad_first_seq'; seq: number; entry_id: string }
  | { kind: 'out_of_order'; seq: number; entry_id: string };

export interface ChainCheck {
  valid: boolean;
  findings: ChainFinding[];
  /** The first entry that is not what the chain says it must be, or null. */
  first_bad_seq: number | null;
  /** Every entry from the first bad one on: none of them can be trusted any more. */
  untrusted_entry_ids: string[];
}

/**
 * Recomputes one application's chain: every hash, every link, seq from 1 without gaps. Finds every
 * problem (an edited entry is a hash mismatch, or a broken link on the next one when the editor
 * recomputed the hash; a removed entry is a gap) and marks every entry from the first bad one on.
 * A broken link between two consecutive, correctly sealed entries makes the earlier one the bad one:
 * its successor no longer vouches for it, and it is the entry an editor who recomputed the hash changed.
 */
export function checkAuditChain(entries: readonly AuditEntry[]): ChainCheck {
  const findings: ChainFinding[] = [];
  let firstBadIndex: number | null = null;
  const bad = (index: number, finding: ChainFinding) => {
    findings.push(finding);
    if (firstBadIndex === null || index < firstBadIndex) firstBadIndex = index;
  };
  let previous: AuditEntry | null = null;
  entries.forEach((entry, index) => {
    const recomputed = auditEntryHash(entry);
    const sealed = recomputed === entry.hash;
    if (!sealed) {
      bad(index, { kind: 'hash_mismatch', seq: entry.seq, entry_id: entry.entry_id, expected: recomputed, found: entry.hash });
    }
    if (previous === null) {
      if (entry.seq !== 1) bad(index, { kind: 'bad_first_seq', seq: entry.seq, entry_id: entry.entry_id });
      if (entry.prev_hash !== GENESIS_PREV_HASH && entry.seq === 1) {
        bad(index, { kind: 'broken_link', seq: entry.seq, entry_id: entry.entry_id, expected: GENESIS_PREV_HASH, found: entry.prev_hash });
      }
    } else {
      if (entry.seq <= previous.seq) {
        bad(index, { kind: 'out_of_order', seq: entry.seq, entry_id: entry.entry_id });
      } else if (entry.seq !== previous.seq + 1) {
        bad(index, { kind: 'missing_entries', after_seq: previous.seq, next_seq: entry.seq });
      }
      if (entry.prev_hash !== previous.hash) {
        // Two neighbours that are each sealed but do not link: the successor's prev_hash is the only
        // thing that vouches for the predecessor, so the predecessor can no longer be trusted (it is
        // what an editor who recomputed its hash leaves behind). When the entry is itself unsealed,
        // or follows a gap, the break is explained by the entry itself and the blame stays with it.
        const blamePredecessor = sealed && entry.seq === previous.seq + 1;
        bad(blamePredecessor ? index - 1 : index, { kind: 'broken_link', seq: entry.seq, entry_id: entry.entry_id, expected: previous.hash, found: entry.prev_hash });
      }
    }
    previous = entry;
  });
  const first: number | null = firstBadIndex;
  return {
    valid: findings.length === 0,
    findings,
    first_bad_seq: first === null ? null : entries[first].seq,
    untrusted_entry_ids: first === null ? [] : entries.slice(first).map((entry) => entry.entry_id),
  };
}
