import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A consent record's receipt as frozen at commit (the decision-time sections, never rewritten).
 * Reads append the lifecycle (withdrawals, expiry) as a projection.
 */
@Entity({ name: 'receipts' })
@Index('UQ_receipts_source_event', ['sourceEventId'], { unique: true })
@Index('IX_receipts_application', ['applicationId', 'frozenAt'])
export class ReceiptRecord {
  @PrimaryColumn({ name: 'record_id', type: 'text' })
  recordId: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  /** The decision event the receipt was frozen from; a redelivered event freezes nothing twice. */
  @Column({ name: 'source_event_id', type: 'text' })
  sourceEventId: string;

  @Column({ type: 'jsonb' })
  frozen: Record<string, unknown>;

  @Column({ name: 'frozen_at', type: 'timestamptz' })
  frozenAt: Date;
}
