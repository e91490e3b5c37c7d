import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Operator-facing activity of the edge, such as `cors.preflight_denied`. A preflight carries no
 * credential, so such an event names the origin and path, and no application.
 */
@Entity({ name: 'activity_events' })
@Index('IDX_activity_events_type_time', ['type', 'occurredAt'])
export class ActivityEventRecord {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ name: 'application_id', type: 'text', nullable: true })
  applicationId: string | null;

  @Column({ type: 'jsonb' })
  detail: Record<string, unknown>;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;
}
