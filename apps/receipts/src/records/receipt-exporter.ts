import { Inject, Injectable } from '@nestjs/common';
import { ReceiptsEnvironment } from '@dcr/config';
import { ReceiptExportReply, ReceiptFlavor } from '@dcr/contracts';
import { notFound } from '@dcr/domain';
import { canonicalReceipt, dpvReceipt, FrozenReceipt, LifecycleFact, projectReceipt, RECEIPT_SCHEMA_PATH, signReceipt } from '@dcr/receipts';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { ReceiptKeys } from '../keys/receipt-keys';

/** A receipt as read now (the frozen record plus its lifecycle), in the flavor asked for. */
@Injectable()
export class ReceiptExporter {
  private readonly schemaUrl: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: ReceiptKeys,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    const env = context.env as ReceiptsEnvironment;
    this.schemaUrl = `${env.PUBLIC_BASE_URL ?? 'https://dcr.invalid'}${RECEIPT_SCHEMA_PATH}`;
  }

  async export(recordId: string, flavor: ReceiptFlavor): Promise<ReceiptExportReply> {
    const rows: Array<{ application_id: string; frozen: FrozenReceipt; facts: LifecycleFact[] | null }> = await this.dataSource.query(
      `SELECT r."application_id", r."frozen",
              (SELECT json_agg(f."fact" ORDER BY f."at", f."source_event_id") FROM "receipts"."lifecycle_facts" f WHERE f."record_id" = r."record_id") AS "facts"
         FROM "receipts"."receipts" r WHERE r."record_id" = $1`,
      [recordId],
    );
    if (rows.length === 0) throw notFound('Receipt');
    const { application_id, frozen, facts } = rows[0];
    const receipt = projectReceipt(frozen, facts ?? [], { schemaUrl: this.schemaUrl, now: new Date() }) as unknown as Record<string, unknown>;
    switch (flavor) {
      case 'canonical':
        return { application_id, content_type: 'application/json', body: canonicalReceipt(receipt) };
      case 'dpv':
        return { application_id, content_type: 'application/ld+json', body: JSON.stringify(dpvReceipt(receipt as never)) };
      case 'signed':
        return { application_id, content_type: 'application/json', body: JSON.stringify(await signReceipt(receipt, this.keys.current())) };
    }
  }
}
