import { Injectable } from '@nestjs/common';
import { AuditActor, DECISIONS_EVENT, DecisionEventMessage } from '@dcr/contracts';
import { declaredActor, OutboxEvent, OutboxRelay as ServiceOutboxRelay, ServiceClients } from '@dcr/service-kit';
import { DataSource } from 'typeorm';

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

/** The decisions outbox: onto the audit trail, then published as `decisions.event` for webhooks. */
@Injectable()
export class OutboxRelay extends ServiceOutboxRelay {
  constructor(dataSource: DataSource, clients: ServiceClients) {
    super(dataSource, clients, 'decisions');
  }

  protected actorOf(row: OutboxEvent): AuditActor {
    return auditActorOf(row.type, row.data);
  }

  protected override afterAppend(rows: OutboxEvent[]): void {
    for (const row of rows) {
      const message: DecisionEventMessage = {
        id: row.id,
        type: row.type,
        application_id: row.applicationId,
        occurred_at: row.occurredAt.toISOString(),
        data: row.data,
        internal: row.internal,
      };
      this.clients.own.emit(DECISIONS_EVENT, message).subscribe({
        error: (error) => this.logger.warn(`event ${row.id} not published: ${String(error)}`),
      });
    }
  }
}
