import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A consent record's receipt as frozen at commit (the decision-time sections, never rewritten).
 * Reads append the lifecycle (withdrawals, expiry) as a projection.
 */
@Entity({ name: 'receipts' })
export class ReceiptRecord {
  @PrimaryColumn({ name: 'record_id', type: 'text' })
  recordId: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  /**
   * The decision event the receipt was frozen from (kept as evidence, not indexed: a redelivered
   * event freezes nothing twice because a record has one receipt, by the primary key).
   */
  @Column({ name: 'source_event_id', type: 'text' })
  sourceEventId: string;

  @Column({ type: 'jsonb' })
  frozen: Record<string, unknown>;

  @Column({ name: 'frozen_at', type: 'timestamptz' })
  frozenAt: Date;
}
