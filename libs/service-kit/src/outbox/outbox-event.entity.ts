import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A fact a service owes the rest of the system (the audit trail, webhooks). Written in the same
 * transaction as the change it describes, so a committed decision never loses its event; the relay
 * deletes a row in the transaction that saw its event onto the audit trail, so the table holds only
 * events not yet relayed, and delivery is at least once (OutboxRelay).
 */
@Entity({ name: 'outbox' })
export class OutboxEvent {
  /** `newEventId`: ordered by the time the event was made, which is the order the relay takes rows in. */
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  /** Internal facts (state changes with their actor) go to the audit trail, not to webhooks. */
  @Column({ type: 'boolean', default: false })
  internal: boolean;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;
}
