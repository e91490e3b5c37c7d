import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Where an application wants its events, which ones, and the (encrypted) key it verifies them with. */
@Entity({ name: 'subscriptions' })
@Index('IX_subscriptions_application', ['applicationId'])
@Check('CK_subscriptions_revision', '"revision" >= 1')
@Check('CK_subscriptions_previous_secret', '("previous_secret_sealed" IS NULL) = ("previous_secret_until" IS NULL)')
export class WebhookSubscription {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', array: true })
  events: string[];

  /** The application's environment at creation: production deliveries never reach private addresses. */
  @Column({ type: 'text' })
  environment: string;

  @Column({ type: 'text' })
  status: string;

  /** AES-256-GCM under WEBHOOK_SECRET_KEY; the secret itself is shown once and never stored in clear. */
  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  /** The secret before the last rotation, sealed the same way: it signs beside the new one until `previousSecretUntil`. */
  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
  previousSecretSealed: string | null;

  @Column({ name: 'previous_secret_until', type: 'timestamptz', nullable: true })
  previousSecretUntil: Date | null;

  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures: number;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  /** Bumped by every change, wherever it is made: orders the changes peers exchange (SubscriptionReplicator). */
  @Column({ type: 'integer', default: 1 })
  revision: number;
}
