import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Something that happened to a record after its decision (a withdrawal), from its producer's event. */
@Entity({ name: 'lifecycle_facts' })
@Index('IX_lifecycle_facts_record', ['recordId', 'at'])
export class LifecycleFactRecord {
  /** The producer's event id: a redelivered event adds no second fact. */
  @PrimaryColumn({ name: 'source_event_id', type: 'text' })
  sourceEventId: string;

  @Column({ name: 'record_id', type: 'text' })
  recordId: string;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'jsonb' })
  fact: Record<string, unknown>;
}
