import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One event on its way to one subscription: the durable queue. `pending` rows are due at
 * `next_attempt_at`; a worker claims them as `delivering` until `lease_until`, so a worker that dies
 * mid-delivery leaves them to the next claim.
 */
@Entity({ name: 'deliveries' })
@Index('UQ_deliveries_event', ['subscriptionId', 'eventId'], { unique: true, where: '"test" = false AND "replay_of" IS NULL' })
@Index('IX_deliveries_due', ['nextAttemptAt'], { where: `"status" = 'pending'` })
@Index('IX_deliveries_application_due', ['applicationId', 'nextAttemptAt'], { where: `"status" = 'pending'` })
@Index('IX_deliveries_leased', ['leaseUntil'], { where: `"status" = 'delivering'` })
@Index('IX_deliveries_subscription', ['subscriptionId', 'createdAt'])
export class WebhookDelivery {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  /** The producer's event id, sent as X-Service-Event-ID on every attempt and replay. */
  @Column({ name: 'event_id', type: 'text' })
  eventId: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType: string;

  /** The exact bytes sent (and signed). */
  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'text' })
  status: string;

  @Column({ type: 'boolean', default: false })
  test: boolean;

  @Column({ name: 'replay_of', type: 'text', nullable: true })
  replayOf: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  /** Why it failed without being sent (its subscription was disabled or deleted); null otherwise. */
  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason: string | null;
}
