import { Injectable } from '@nestjs/common';
import {
  AuditActor,
  RECEIPTS_INGEST,
  ReceiptsIngestReply,
  ReceiptsIngestRequest,
  WEBHOOKS_ENQUEUE,
  WebhooksEnqueueReply,
  WebhooksEnqueueRequest,
} from '@dcr/contracts';
import { declaredActor, OutboxEvent, OutboxRelay as ServiceOutboxRelay, ServiceClients } from '@dcr/service-kit';
import { firstValueFrom, timeout } from 'rxjs';
import { DataSource } from 'typeorm';

/** How long the relay waits for the webhooks and receipts services to store a batch. */
const CONSUMER_TIMEOUT_MS = 10_000;
/** The events a receipt is frozen from, or that add to its lifecycle. */
const RECEIPT_EVENTS = new Set(['consent.granted', 'consent.denied', 'consent.revoked', 'consent.purpose_revoked']);

export { NewOutboxEvent, outboxRow, recordEvent } from '@dcr/service-kit';

/**
 * Who caused a decisions event, for its audit entry: state changes carry their actor; a decision's
 * outcome is the participant's (with the subject's opaque id when known); flow changes are the
 * application's; anything else (expiry sweeps) is the system's.
 */
export function auditActorOf(type: string, data: Record<string, unknown>): AuditActor {
  const declared = declaredActor(data);
  if (declared) return declared;
  if (type.startsWith('flow.')) return { type: 'application' };
  if (type.startsWith('consent.') || type.startsWith('approval.')) {
    const subject = data.subject as { id?: unknown } | null | undefined;
    return { type: 'participant', ...(typeof subject?.id === 'string' ? { id: subject.id } : {}) };
  }
  return { type: 'system' };
}

/** The decisions outbox: onto the audit trail, then into the webhooks service's delivery queue. */
@Injectable()
export class OutboxRelay extends ServiceOutboxRelay {
  constructor(dataSource: DataSource, clients: ServiceClients) {
    super(dataSource, clients, 'decisions');
  }

  protected actorOf(row: OutboxEvent): AuditActor {
    return auditActorOf(row.type, row.data);
  }

  /**
   * Queues the webhook deliveries of the batch's public events (internal ones, the state changes, are
   * for the audit trail only) and hands the consent outcomes and withdrawals to the receipts service.
   * Waiting for both answers is what makes them durable: a row is deleted only once both stored it,
   * and each recognises a repeat by the event id.
   */
  protected override async afterAppend(rows: OutboxEvent[]): Promise<void> {
    const events = rows
      .filter((row) => !row.internal)
      .map((row) => ({ id: row.id, type: row.type, application_id: row.applicationId, occurred_at: row.occurredAt.toISOString(), data: row.data }));
    if (events.length === 0) return;
    const receiptEvents = events.filter((event) => RECEIPT_EVENTS.has(event.type));
    await Promise.all([
      firstValueFrom(this.clients.own.send<WebhooksEnqueueReply, WebhooksEnqueueRequest>(WEBHOOKS_ENQUEUE, { events }).pipe(timeout(CONSUMER_TIMEOUT_MS))),
      receiptEvents.length > 0
        ? firstValueFrom(
            this.clients.own.send<ReceiptsIngestReply, ReceiptsIngestRequest>(RECEIPTS_INGEST, { events: receiptEvents }).pipe(timeout(CONSUMER_TIMEOUT_MS)),
          )
        : undefined,
    ]);
  }
}
