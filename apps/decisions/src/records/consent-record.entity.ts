import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A consent the organisation collected itself and recorded through the Record API (or an import):
 * the per-purpose statuses the capture rules gave its attestation, against one flow version.
 * It lives only in the person's home country, like the person.
 */
@Entity({ name: 'consent_records' })
@Index('UQ_consent_records_idempotency', ['applicationId', 'idempotencyKey'], { unique: true, where: '"idempotency_key" IS NOT NULL' })
// A person's records a page at a time, and a chain in the order its decisions were made (RecordsReadByPage1766531000000,
// which dropped IX_consent_records_subject: the chain's index serves its lookups).
@Index('IX_consent_records_person_page', ['subjectId', 'capturedAt', 'recordedAt', 'recordId'])
@Index('IX_consent_records_chain_order', ['subjectId', 'flowId', 'capturedAt', 'recordedAt', 'recordId'])
@Index('UQ_consent_records_successor', ['supersedes'], { unique: true, where: '"supersedes" IS NOT NULL' })
export class ConsentRecord {
  @PrimaryColumn({ name: 'record_id', type: 'text' })
  recordId: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId: string;

  @Column({ name: 'flow_version', type: 'integer' })
  flowVersion: number;

  @Column({ name: 'subject_id', type: 'text' })
  subjectId: string;

  @Column({ type: 'jsonb' })
  purposes: Record<string, { status: 'granted' | 'declined' | 'objected' | 'noticed'; basis: string }>;

  @Column({ type: 'text' })
  status: string;

  @Column({ type: 'text' })
  channel: string;

  @Column({ name: 'captured_at', type: 'timestamptz' })
  capturedAt: Date;

  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt: Date;

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @Column({ name: 'request_fingerprint', type: 'text', nullable: true })
  requestFingerprint: string | null;

  /** The record of the same person and flow this one replaced. */
  @Column({ type: 'text', nullable: true })
  supersedes: string | null;

  /** Purposes later withdrawn from this record (by a newer record or by the person), with when. */
  @Column({ type: 'jsonb' })
  withdrawals: Array<{ purpose?: string; at: string; channel: string }>;
}
