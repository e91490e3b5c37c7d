import { Inject, Injectable } from '@nestjs/common';
import { ReceiptsEnvironment } from '@dcr/config';
import { ReceiptExportReply, ReceiptFlavor } from '@dcr/contracts';
import { notFound } from '@dcr/domain';
import {
  canonicalReceipt,
  consentExpiresAt,
  dpvReceipt,
  FrozenReceipt,
  LifecycleFact,
  projectReceipt,
  RECEIPT_SCHEMA_PATH,
  signReceipt,
} from '@dcr/receipts';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { ReceiptKeys } from '../keys/receipt-keys';

interface Projected {
  /** How many lifecycle facts the projection holds: a new fact makes it stale. */
  facts: number;
  /** When it stops being the receipt as read (its consent expires), in ms; Infinity when never. */
  validUntil: number;
  receipt: Record<string, unknown>;
  canonical: string;
  /** The signed export of this projection, made on first request, with the key that made it. */
  signed?: { kid: string; body: string };
}

/** Projections kept in memory; the oldest go first. */
const CACHE_SIZE = 10_000;

/**
 * A receipt as read now (the frozen record plus its lifecycle), in the flavor asked for. A
 * projection changes only when a lifecycle fact is added or the consent expires, so the last one of
 * each record, with its canonical text and its signed export, is kept (checked against the fact
 * count on every read) and reused until then.
 */
@Injectable()
export class ReceiptExporter {
  private readonly schemaUrl: string;
  private readonly projections = new Map<string, Projected>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: ReceiptKeys,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    const env = context.env as ReceiptsEnvironment;
    this.schemaUrl = `${env.PUBLIC_BASE_URL ?? 'https://dcr.invalid'}${RECEIPT_SCHEMA_PATH}`;
  }

  async export(recordId: string, flavor: ReceiptFlavor): Promise<ReceiptExportReply> {
    // The kept projection is taken once: the query answers whether it is still the receipt, and it
    // may expire (the consent's term ends) or be evicted while the query runs, in which case the
    // receipt is read and projected afresh.
    const kept = this.cached(recordId);
    let read = await this.read(recordId, kept?.facts ?? null);
    if (read && read.frozen === null && !(kept && kept.validUntil > Date.now())) read = await this.read(recordId, null);
    if (!read) throw notFound('Receipt');
    const row = read;
    const projected = row.frozen === null ? kept! : await this.project(recordId, row.frozen, row.fact_count);
    switch (flavor) {
      case 'canonical':
        return { application_id: row.application_id, content_type: 'application/json', body: projected.canonical };
      case 'dpv':
        return { application_id: row.application_id, content_type: 'application/ld+json', body: JSON.stringify(dpvReceipt(projected.receipt as never)) };
      case 'signed': {
        // The same projection signed by the same key is the same statement: sign it once.
        const key = this.keys.current();
        if (projected.signed?.kid !== key.kid) projected.signed = { kid: key.kid, body: JSON.stringify(await signReceipt(projected.receipt, key)) };
        return { application_id: row.application_id, content_type: 'application/json', body: projected.signed.body };
      }
    }
  }

  /**
   * The receipt's application and lifecycle fact count, and its frozen part unless `keptFacts` (the
   * fact count of a kept projection) is still the count: then the projection is still the receipt.
   */
  private async read(recordId: string, keptFacts: number | null): Promise<{ application_id: string; frozen: FrozenReceipt | null; fact_count: number } | undefined> {
    const [row]: Array<{ application_id: string; frozen: FrozenReceipt | null; fact_count: number }> = await this.dataSource.query(
      `SELECT r."application_id",
              CASE WHEN $2::int IS NULL OR $2::int <> (SELECT count(*) FROM "receipts"."lifecycle_facts" f WHERE f."record_id" = r."record_id")
                   THEN r."frozen" END AS "frozen",
              (SELECT count(*)::int FROM "receipts"."lifecycle_facts" f WHERE f."record_id" = r."record_id") AS "fact_count"
         FROM "receipts"."receipts" r WHERE r."record_id" = $1`,
      [recordId, keptFacts],
    );
    return row;
  }

  /** The kept projection of a record, if it is still the receipt as read. */
  private cached(recordId: string): Projected | undefined {
    const kept = this.projections.get(recordId);
    if (kept && kept.validUntil <= Date.now()) {
      this.projections.delete(recordId);
      return undefined;
    }
    return kept;
  }

  private async project(recordId: string, frozen: FrozenReceipt, factCount: number): Promise<Projected> {
    const facts: LifecycleFact[] = factCount === 0
      ? []
      : (await this.dataSource.query(`SELECT "fact" FROM "receipts"."lifecycle_facts" WHERE "record_id" = $1 ORDER BY "at", "source_event_id"`, [recordId])).map(
          (row: { fact: LifecycleFact }) => row.fact,
        );
    const now = Date.now();
    const receipt = projectReceipt(frozen, facts, { schemaUrl: this.schemaUrl, now: new Date(now) }) as unknown as Record<string, unknown>;
    const expiresAt = consentExpiresAt(frozen);
    const expiry = expiresAt ? Date.parse(expiresAt) : Infinity;
    const projected: Projected = { facts: facts.length, validUntil: expiry > now ? expiry : Infinity, receipt, canonical: canonicalReceipt(receipt) };
    this.projections.delete(recordId);
    this.projections.set(recordId, projected);
    if (this.projections.size > CACHE_SIZE) this.projections.delete(this.projections.keys().next().value as string);
    return projected;
  }
}
