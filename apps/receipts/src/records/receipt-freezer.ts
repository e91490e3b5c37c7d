import { Inject, Injectable, Logger } from '@nestjs/common';
import { ReceiptsEnvironment } from '@dcr/config';
import {
  ApplicationIdentityReply,
  FLOWS_GET,
  FlowMessage,
  GATEWAY_APPLICATION_IDENTITY,
  ReceiptEventInput,
  ReceiptsIngestReply,
} from '@dcr/contracts';
import { ConsentOutcome, FlowTerms, PurposeStatus } from '@dcr/domain';
import { CollectionChannel, DecisionDeliveryMode, freezeConsentReceipt, FrozenReceiptInput } from '@dcr/receipts';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';
import { SUPERVISORY_AUTHORITIES } from './authorities';

const CONSENT_OUTCOME_EVENTS = new Set(['consent.granted', 'consent.denied']);
const RPC_TIMEOUT_MS = 10_000;

/**
 * Freezes a consent record's receipt from its decision event, and records withdrawals as lifecycle
 * facts. The inputs are immutable once the decision is committed (the flow version's terms, the
 * session's outcome and times), so freezing from the event a few milliseconds later gives what
 * freezing inside the commit would have; a redelivered event is recognised by its id.
 */
@Injectable()
export class ReceiptFreezer {
  private readonly logger = new Logger(ReceiptFreezer.name);
  private readonly env: ReceiptsEnvironment;

  constructor(
    private readonly dataSource: DataSource,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) context: ServiceContext,
  ) {
    this.env = context.env as ReceiptsEnvironment;
  }

  async ingest(events: ReceiptEventInput[]): Promise<ReceiptsIngestReply> {
    let frozen = 0;
    let lifecycle = 0;
    for (const event of events) {
      const recordId = event.data.record_id;
      if (typeof recordId !== 'string') continue;
      if (CONSENT_OUTCOME_EVENTS.has(event.type) && event.data.kind === 'consent') {
        frozen += await this.freeze(event, recordId);
      } else if (event.type === 'consent.revoked') {
        const inserted: unknown[] = await this.dataSource.query(
          `INSERT INTO "receipts"."lifecycle_facts" ("source_event_id", "record_id", "at", "fact") VALUES ($1, $2, $3, $4)
           ON CONFLICT DO NOTHING RETURNING 1`,
          // Withdrawn by the person from the hosted pages: their own records.
          [event.id, recordId, event.occurred_at, JSON.stringify({ kind: 'withdrawal', at: event.occurred_at, channel: 'own_records' })],
        );
        lifecycle += inserted.length;
      }
    }
    return { frozen, lifecycle };
  }

  private async freeze(event: ReceiptEventInput, recordId: string): Promise<number> {
    const [known] = await this.dataSource.query(`SELECT 1 FROM "receipts"."receipts" WHERE "record_id" = $1`, [recordId]);
    if (known) return 0;
    const data = event.data as Record<string, any>;
    const [flow, application] = await Promise.all([
      firstValueFrom(this.clients.own.send<FlowMessage>(FLOWS_GET, { flow_id: data.flow_id, version: data.flow_version }).pipe(timeout(RPC_TIMEOUT_MS))),
      firstValueFrom(
        this.clients.own.send<ApplicationIdentityReply>(GATEWAY_APPLICATION_IDENTITY, { application_id: event.application_id }).pipe(timeout(RPC_TIMEOUT_MS)),
      ),
    ]);
    const base = this.env.PUBLIC_BASE_URL;
    const input: FrozenReceiptInput = {
      recordId,
      flow: { id: flow.id, terms: flow.terms as unknown as FlowTerms },
      subject: typeof data.subject?.id === 'string' ? { id: data.subject.id } : { anonymous: true },
      decision: {
        outcome: data.outcome as ConsentOutcome,
        ...(data.purposes ? { purposeStatuses: data.purposes as Record<string, PurposeStatus> } : {}),
        ...(typeof data.locale === 'string' ? { locale: data.locale } : {}),
        channel: (data.delivery_mode === 'embed' ? 'embedded' : 'hosted') as CollectionChannel,
        ...(typeof data.delivery_mode === 'string' ? { deliveryMode: data.delivery_mode as DecisionDeliveryMode } : {}),
        ...(typeof data.requested_at === 'string' ? { requestedAt: data.requested_at } : {}),
        decidedAt: data.completed_at ?? event.occurred_at,
        recordedAt: event.occurred_at,
      },
      application: { id: application.id, name: application.name },
      storageCountry: this.env.COUNTRY,
      processor: {
        id: 'dcr-platform',
        name: this.env.RECEIPT_PROCESSOR_NAME ?? 'Decision, Consent and Receipt Service',
        ...(this.env.RECEIPT_PROCESSOR_URL ? { url: this.env.RECEIPT_PROCESSOR_URL } : {}),
      },
      ...(SUPERVISORY_AUTHORITIES[this.env.COUNTRY] ? { supervisoryAuthority: SUPERVISORY_AUTHORITIES[this.env.COUNTRY] } : {}),
      // The person withdraws from their inbox (a mailed one-time code): an entry point with no credential in it.
      ...(base ? { withdrawalUrl: `${base}/inbox` } : {}),
    };
    const receipt = freezeConsentReceipt(input);
    const inserted: unknown[] = await this.dataSource.query(
      `INSERT INTO "receipts"."receipts" ("record_id", "application_id", "source_event_id", "frozen", "frozen_at") VALUES ($1, $2, $3, $4, now())
       ON CONFLICT DO NOTHING RETURNING 1`,
      [recordId, event.application_id, event.id, JSON.stringify(receipt)],
    );
    return inserted.length;
  }
}
