import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One HTTP attempt of a delivery, for inspection: what was sent, what came back, how long it took. */
@Entity({ name: 'delivery_attempts' })
export class WebhookDeliveryAttempt {
  @PrimaryColumn({ name: 'delivery_id', type: 'text' })
  deliveryId: string;

  @PrimaryColumn({ type: 'integer' })
  attempt: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ name: 'request_headers', type: 'jsonb' })
  requestHeaders: Record<string, string>;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt: string | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;
}
