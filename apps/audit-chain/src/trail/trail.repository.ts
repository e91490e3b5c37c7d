import { Injectable } from '@nestjs/common';
import { AuditEntryMessage } from '@dcr/contracts';
import { JsonRecordset, PreparedStatement } from '@dcr/persistence';
import { NodeId, rootOfLeaves } from '@dcr/transparency';
import { DataSource, EntityManager } from 'typeorm';

type Queryable = Pick<EntityManager, 'query'>;

/** An entry ready to be stored, with everything the trail keeps besides the contract's fields. */
export interface StoredEntry extends AuditEntryMessage {
  leaf_index: number;
  source: string;
  source_event_id: string;
  application_id: string;
  payload: Record<string, unknown>;
}

/**
 * A batch's entries as one JSON document (`jsonb_to_recordset`): the actor and the payload go in as
 * JSON values, not as text escaped into an array literal.
 */
const ENTRY_ROWS = new JsonRecordset<StoredEntry>([
  { key: 'leaf_index', read: (e) => e.leaf_index, type: 'bigint' },
  { key: 'entry_id', read: (e) => e.entry_id },
  { key: 'source', read: (e) => e.source },
  { key: 'source_event_id', read: (e) => e.source_event_id },
  { key: 'application_id', read: (e) => e.application_id },
  { key: 'seq', read: (e) => e.seq, type: 'bigint' },
  { key: 'event_type', read: (e) => e.event_type },
  { key: 'actor', read: (e) => e.actor, type: 'jsonb' },
  { key: 'occurred_at', read: (e) => e.occurred_at, type: 'timestamptz' },
  { key: 'payload_digest', read: (e) => e.payload_digest },
  { key: 'prev_hash', read: (e) => e.prev_hash },
  { key: 'hash', read: (e) => e.hash },
  { key: 'payload', read: (e) => e.payload, type: 'jsonb' },
]);

/** Taken first in every append's transaction, before anything of the trail is read. */
const LOCK_FOR_APPEND = new PreparedStatement('audit_chain_lock_for_append', `SELECT pg_advisory_xact_lock(hashtext('audit_chain.append'))`);

/**
 * Read after the lock, so it sees every append committed before: a separate statement from the lock,
 * since a statement reads from the snapshot it started with. Planned per call (array parameters).
 */
const APPEND_STATE = new PreparedStatement<{
  size: string;
  existing: Array<[string, string, string, number]>;
  heads: Array<[string, number, string]>;
}>(
  'audit_chain_append_state',
  `SELECT
     (SELECT COALESCE(MAX("leaf_index") + 1, 0) FROM "audit_chain"."entries") AS "size",
     (SELECT COALESCE(json_agg(json_build_array(e."source", e."source_event_id", e."entry_id", e."leaf_index")), '[]')
        FROM "audit_chain"."entries" e
        JOIN unnest($1::text[], $2::text[]) AS k("source", "id") ON e."source" = k."source" AND e."source_event_id" = k."id") AS "existing",
     (SELECT COALESCE(json_agg(json_build_array("application_id", "seq", "hash")), '[]')
        FROM "audit_chain"."chain_heads" WHERE "application_id" = ANY($3::text[])) AS "heads"`,
  { reusePlan: false },
);

/** A batch's entries, its new Merkle nodes and its applications' new chain heads, in one statement. */
const INSERT_BATCH = new PreparedStatement(
  'audit_chain_insert_batch',
  `WITH "new_entries" AS (
         INSERT INTO "audit_chain"."entries"
           ("leaf_index", "entry_id", "source", "source_event_id", "application_id", "seq", "event_type", "actor",
            "occurred_at", "payload_digest", "prev_hash", "hash", "payload", "appended_at")
         SELECT "leaf_index", "entry_id", "source", "source_event_id", "application_id", "seq", "event_type", "actor",
            "occurred_at", "payload_digest", "prev_hash", "hash", "payload", $2::timestamptz
           FROM jsonb_to_recordset($1::jsonb) AS r(${ENTRY_ROWS.columns})
         RETURNING 1
       ), "new_nodes" AS (
         INSERT INTO "audit_chain"."merkle_nodes" ("level", "idx", "hash")
         SELECT * FROM unnest($3::smallint[], $4::bigint[], $5::bytea[])
         RETURNING 1
       )
       INSERT INTO "audit_chain"."chain_heads" ("application_id", "seq", "hash")
       SELECT * FROM unnest($6::text[], $7::bigint[], $8::text[])
       ON CONFLICT ("application_id") DO UPDATE SET "seq" = EXCLUDED."seq", "hash" = EXCLUDED."hash"`,
);

/**
 * The Merkle tree keeps the leaf hashes (level 0) and its complete subtrees from this level up. A
 * node of levels 1 to STORED_FROM_LEVEL - 1 (a subtree of 2 to 8 leaves) is computed from the stored
 * leaf hashes when a root or a proof needs it: at most 2^STORED_FROM_LEVEL - 2 of them per proof, in
 * the same query. Storing every complete subtree wrote about two node rows per entry; this writes
 * one and an eighth. The leaf hashes stay stored apart from the entries so that a proof can still be
 * made, and a deleted entry named as missing, when an entry row is removed from the database.
 */
export const STORED_FROM_LEVEL = 4;

const isStored = (level: number) => level === 0 || level >= STORED_FROM_LEVEL;

const ENTRY_COLUMNS = `"seq", "entry_id", "event_type", "actor", "occurred_at", "payload_digest", "prev_hash", "hash"`;

export function entryMessageOf(row: Record<string, unknown>): AuditEntryMessage {
  return {
    seq: Number(row.seq),
    entry_id: row.entry_id as string,
    event_type: row.event_type as string,
    actor: row.actor as AuditEntryMessage['actor'],
    occurred_at: (row.occurred_at as Date).toISOString(),
    payload_digest: row.payload_digest as string,
    prev_hash: row.prev_hash as string,
    hash: row.hash as string,
  };
}

/**
 * SQL of the trail: entries, chain heads and Merkle nodes. The append path sends a whole batch in
 * one statement: the entries as a JSON document, the nodes and heads as arrays (`unnest`).
 */
@Injectable()
export class TrailRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Serialises appends of the country across replicas for the length of the caller's transaction. */
  async lockForAppend(manager: EntityManager): Promise<void> {
    await LOCK_FOR_APPEND.run(manager, []);
  }

  /**
   * What an append needs to know once it holds the lock, in one round trip: which of the batch's
   * events are already on the trail (a producer's redelivery), the tree's size, and the chain heads
   * of the batch's applications.
   */
  async appendState(
    manager: EntityManager,
    keys: Array<{ source: string; id: string }>,
    applicationIds: string[],
  ): Promise<{ known: Map<string, { entry_id: string; leaf_index: number }>; size: number; heads: Map<string, { seq: number; hash: string }> }> {
    const [row] = await APPEND_STATE.rows(manager, [keys.map((key) => key.source), keys.map((key) => key.id), applicationIds]);
    return {
      known: new Map(row.existing.map(([source, id, entryId, leafIndex]) => [`${source}\u0000${id}`, { entry_id: entryId, leaf_index: Number(leafIndex) }])),
      size: Number(row.size),
      heads: new Map(row.heads.map(([applicationId, seq, hash]) => [applicationId, { seq: Number(seq), hash }])),
    };
  }

  async treeSize(manager: Queryable = this.dataSource): Promise<number> {
    const [row] = await manager.query(`SELECT COALESCE(MAX("leaf_index") + 1, 0) AS "size" FROM "audit_chain"."entries"`);
    return Number(row.size);
  }

  /**
   * Perfect-subtree hashes, in the order asked: the stored ones (leaves, and levels from
   * STORED_FROM_LEVEL up) read in one query with the leaves that the others are computed from.
   */
  async nodes(ids: readonly NodeId[], manager: Queryable = this.dataSource): Promise<Buffer[]> {
    if (ids.length === 0) return [];
    const wanted = new Map<string, NodeId>();
    for (const id of ids) {
      if (isStored(id.level)) wanted.set(`${id.level}/${id.index}`, id);
      else for (let leaf = id.index * 2 ** id.level; leaf < (id.index + 1) * 2 ** id.level; leaf++) wanted.set(`0/${leaf}`, { level: 0, index: leaf });
    }
    const read = [...wanted.values()];
    const rows: Array<{ level: number; idx: string; hash: Buffer }> = await manager.query(
      `SELECT n."level", n."idx", n."hash" FROM "audit_chain"."merkle_nodes" n
       JOIN unnest($1::smallint[], $2::bigint[]) AS k("level", "idx") ON n."level" = k."level" AND n."idx" = k."idx"`,
      [read.map((id) => id.level), read.map((id) => id.index)],
    );
    const byId = new Map(rows.map((row) => [`${row.level}/${row.idx}`, row.hash]));
    return ids.map((id) => {
      const hash = isStored(id.level) ? byId.get(`${id.level}/${id.index}`) : this.computed(id, byId);
      if (!hash) throw new Error(`Merkle node ${id.level}/${id.index} is missing`);
      return hash;
    });
  }

  /** A node below STORED_FROM_LEVEL from its leaves' stored hashes (undefined when one is missing). */
  private computed(id: NodeId, stored: Map<string, Buffer>): Buffer | undefined {
    const leaves = Array.from({ length: 2 ** id.level }, (_, i) => stored.get(`0/${id.index * 2 ** id.level + i}`));
    return leaves.every((hash): hash is Buffer => hash !== undefined) ? rootOfLeaves(leaves) : undefined;
  }

  /** The entries, their leaf hashes, the new complete subtrees from STORED_FROM_LEVEL up, and the chain heads. */
  async insertBatch(manager: EntityManager, entries: StoredEntry[], completed: Array<NodeId & { hash: Buffer }>, appendedAt: Date): Promise<void> {
    const nodes = completed.filter((node) => isStored(node.level));
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const entry of entries) heads.set(entry.application_id, { seq: entry.seq, hash: entry.hash });
    await INSERT_BATCH.run(manager, [
      ENTRY_ROWS.document(entries),
      appendedAt,
      nodes.map((n) => n.level),
      nodes.map((n) => n.index),
      nodes.map((n) => n.hash),
      [...heads.keys()],
      [...heads.values()].map((h) => h.seq),
      [...heads.values()].map((h) => h.hash),
    ]);
  }

  async list(query: { applicationId: string; types?: string[]; from?: string; to?: string; afterSeq?: number; limit: number }): Promise<AuditEntryMessage[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${ENTRY_COLUMNS} FROM "audit_chain"."entries"
       WHERE "application_id" = $1 AND "seq" > $2
         AND ($3::text[] IS NULL OR "event_type" = ANY($3::text[]))
         AND ($4::timestamptz IS NULL OR "occurred_at" >= $4::timestamptz)
         AND ($5::timestamptz IS NULL OR "occurred_at" < $5::timestamptz)
       ORDER BY "seq" ASC LIMIT $6`,
      [query.applicationId, query.afterSeq ?? 0, query.types?.length ? query.types : null, query.from ?? null, query.to ?? null, query.limit],
    );
    return rows.map(entryMessageOf);
  }

  /** Up to `limit` entries of the application's chain after `afterSeq`, in order, with their leaf index. */
  async chainAfter(applicationId: string, afterSeq: number, limit: number): Promise<Array<AuditEntryMessage & { leaf_index: number }>> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${ENTRY_COLUMNS}, "leaf_index" FROM "audit_chain"."entries" WHERE "application_id" = $1 AND "seq" > $2 ORDER BY "seq" ASC LIMIT $3`,
      [applicationId, afterSeq, limit],
    );
    return rows.map((row) => ({ ...entryMessageOf(row), leaf_index: Number(row.leaf_index) }));
  }

  async leafOf(applicationId: string, entryId: string): Promise<number | null> {
    const [row] = await this.dataSource.query(
      `SELECT "leaf_index" FROM "audit_chain"."entries" WHERE "entry_id" = $1 AND "application_id" = $2`,
      [entryId, applicationId],
    );
    return row ? Number(row.leaf_index) : null;
  }
}
