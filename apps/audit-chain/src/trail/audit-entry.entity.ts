import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One entry of the country's trail. `leaf_index` orders every entry of the country (the Merkle tree's
 * leaves); `seq` and `prev_hash` chain the entries of one application. The payload stays in its home
 * country with the entry; only its digest is hashed into the chain.
 */
@Entity({ name: 'entries' })
@Index('UQ_entries_entry_id', ['entryId'], { unique: true })
@Index('UQ_entries_source_event', ['source', 'sourceEventId'], { unique: true })
@Index('UQ_entries_application_seq', ['applicationId', 'seq'], { unique: true })
export class AuditEntryRecord {
  @PrimaryColumn({ name: 'leaf_index', type: 'bigint' })
  leafIndex: string;

  @Column({ name: 'entry_id', type: 'text' })
  entryId: string;

  @Column({ type: 'text' })
  source: string;

  @Column({ name: 'source_event_id', type: 'text' })
  sourceEventId: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'bigint' })
  seq: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType: string;

  @Column({ type: 'jsonb' })
  actor: { type: string; id?: string };

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ name: 'payload_digest', type: 'text' })
  payloadDigest: string;

  @Column({ name: 'prev_hash', type: 'text' })
  prevHash: string;

  @Column({ type: 'text' })
  hash: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ name: 'appended_at', type: 'timestamptz' })
  appendedAt: Date;
}
