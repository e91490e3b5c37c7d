import { Injectable } from '@nestjs/common';
import { AuditAnchorMessage } from '@dcr/contracts';
import { DataSource, EntityManager } from 'typeorm';

type Queryable = Pick<EntityManager, 'query'>;

function isoOf(value: unknown): string {
  return (value as Date).toISOString();
}

/** Anchors, their witness receipts, and where each witness stands. */
@Injectable()
export class AnchorsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async lockForAnchor(manager: Queryable): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('audit_chain.anchor'))`);
  }

  async newestSize(manager: Queryable = this.dataSource): Promise<number> {
    const [row] = await manager.query(`SELECT COALESCE(MAX("tree_size"), 0) AS "size" FROM "audit_chain"."anchors"`);
    return Number(row.size);
  }

  async insert(manager: Queryable, anchor: { id: string; treeSize: number; merkleRoot: string; origin: string; checkpoint: string; createdAt: Date }) {
    await manager.query(
      `INSERT INTO "audit_chain"."anchors" ("id", "tree_size", "merkle_root", "origin", "checkpoint", "created_at") VALUES ($1, $2, $3, $4, $5, $6)`,
      [anchor.id, anchor.treeSize, anchor.merkleRoot, anchor.origin, anchor.checkpoint, anchor.createdAt],
    );
  }

  /** Stores a witness's cosignature and the note that now carries it. */
  async addReceipt(anchorId: string, receipt: { witness: string; signature: string; cosignature: string; signedAt: Date }): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const inserted: unknown[] = await manager.query(
        `INSERT INTO "audit_chain"."witness_receipts" ("anchor_id", "witness", "signature", "cosignature", "signed_at")
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1`,
        [anchorId, receipt.witness, receipt.signature, receipt.cosignature, receipt.signedAt],
      );
      if (inserted.length === 0) return;
      await manager.query(`UPDATE "audit_chain"."anchors" SET "checkpoint" = "checkpoint" || $2 || E'\\n' WHERE "id" = $1`, [anchorId, receipt.cosignature]);
    });
  }

  async witnessSize(witness: string): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT "tree_size" FROM "audit_chain"."witness_positions" WHERE "witness" = $1`, [witness]);
    return row ? Number(row.tree_size) : 0;
  }

  async setWitnessSize(witness: string, size: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO "audit_chain"."witness_positions" ("witness", "tree_size", "updated_at") VALUES ($1, $2, now())
       ON CONFLICT ("witness") DO UPDATE SET "tree_size" = EXCLUDED."tree_size", "updated_at" = now()`,
      [witness, size],
    );
  }

  /** Newest first; `before` pages backwards by tree size. */
  async list(country: string, limit: number, beforeSize: number | null): Promise<AuditAnchorMessage[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT * FROM "audit_chain"."anchors" WHERE ($1::bigint IS NULL OR "tree_size" < $1::bigint) ORDER BY "tree_size" DESC LIMIT $2`,
      [beforeSize, limit],
    );
    return this.withReceipts(country, rows);
  }

  async byId(country: string, id: string): Promise<AuditAnchorMessage | null> {
    const rows = await this.dataSource.query(`SELECT * FROM "audit_chain"."anchors" WHERE "id" = $1`, [id]);
    return (await this.withReceipts(country, rows))[0] ?? null;
  }

  async newest(country: string): Promise<AuditAnchorMessage | null> {
    return (await this.list(country, 1, null))[0] ?? null;
  }

  async sizeOf(id: string): Promise<number | null> {
    const [row] = await this.dataSource.query(`SELECT "tree_size" FROM "audit_chain"."anchors" WHERE "id" = $1`, [id]);
    return row ? Number(row.tree_size) : null;
  }

  private async withReceipts(country: string, rows: Array<Record<string, unknown>>): Promise<AuditAnchorMessage[]> {
    if (rows.length === 0) return [];
    const receipts: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT * FROM "audit_chain"."witness_receipts" WHERE "anchor_id" = ANY($1::text[]) ORDER BY "signed_at", "witness"`,
      [rows.map((row) => row.id)],
    );
    return rows.map((row) => ({
      id: row.id as string,
      country,
      origin: row.origin as string,
      merkle_root: row.merkle_root as string,
      tree_size: Number(row.tree_size),
      created_at: isoOf(row.created_at),
      checkpoint: row.checkpoint as string,
      witness_receipts: receipts
        .filter((receipt) => receipt.anchor_id === row.id)
        .map((receipt) => ({
          witness: receipt.witness as string,
          signature: receipt.signature as string,
          signed_at: isoOf(receipt.signed_at),
          cosignature: receipt.cosignature as string,
        })),
    }));
  }
}
