import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { afterDeliveryEnded, AttemptOutcome, nextStep, openWebhookSecret, webhookHeaders } from '@dcr/domain';
import { insertOutboxRows, OutboxEvent, outboxRow } from '@dcr/service-kit';
import { DataSource, EntityManager, In } from 'typeorm';
import { WebhookSubscription } from '../subscriptions/subscription.entity';
import { SubscriptionReplicator } from '../subscriptions/subscription-replicator';
import { WebhooksOutboxRelay } from '../webhooks-outbox';
import { WebhooksSettings } from '../webhooks-settings';
import { HttpSender, SendResult } from './http-sender';

interface Claimed {
  id: string;
  subscription_id: string;
  application_id: string;
  event_id: string;
  event_type: string;
  body: string;
  test: boolean;
  attempts: number;
  url: string;
  environment: string;
  subscription_status: string;
  secret_sealed: string;
  /** The secret before the last rotation while it still signs (previous_secret_until), else null. */
  previous_secret_sealed: string | null;
}

interface Finished {
  delivery: Claimed;
  headers: Record<string, string>;
  result: SendResult | null;
  /** Set when no request was sent (the subscription was disabled or deleted meanwhile). */
  skipped?: string;
}

/** At most this many deliveries are claimed per query. */
const CLAIM_BATCH = 200;
/** Due retries and expired leases are looked for this often when nothing wakes the dispatcher. */
const POLL_MS = 250;
/** Finished attempts are written together: at most this long after the first of a batch finished. */
const FLUSH_MS = 5;

/**
 * Works the durable queue: claims due deliveries (`FOR UPDATE SKIP LOCKED`, leased for
 * WEBHOOK_CLAIM_LEASE), sends them signed with bounded concurrency, and writes the outcomes in
 * batches: the attempt log, the next attempt (after a 5xx, a timeout or a network error, while
 * attempts remain) or the end (success, a 4xx, or attempts exhausted), the subscription's
 * consecutive-failure count (five disable it; test deliveries never count), and an audit event for
 * every failed delivery. A worker killed mid-delivery leaves its claims to expire and be taken again:
 * delivery is at least once, and the receiver deduplicates by X-Service-Event-ID.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  private inFlight = 0;
  private claiming = false;
  private wanted = false;
  private closed = false;
  private poller?: NodeJS.Timeout;
  private finished: Finished[] = [];
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private readonly sends = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly sender: HttpSender,
    private readonly settings: WebhooksSettings,
    private readonly outbox: WebhooksOutboxRelay,
    private readonly replicator: SubscriptionReplicator,
  ) {}

  onApplicationBootstrap(): void {
    this.poller = setInterval(() => {
      void this.releaseExpiredLeases();
      this.kick();
    }, POLL_MS);
    this.poller.unref();
    this.kick();
  }

  /** Looks for due deliveries now (after an enqueue, a finished send, or the poll). */
  kick(): void {
    if (this.closed) return;
    if (this.claiming) {
      this.wanted = true;
      return;
    }
    this.claiming = true;
    void this.claimLoop().finally(() => {
      this.claiming = false;
      if (this.wanted) {
        this.wanted = false;
        this.kick();
      }
    });
  }

  private async claimLoop(): Promise<void> {
    try {
      while (!this.closed && this.inFlight < this.settings.concurrency) {
        const room = Math.min(CLAIM_BATCH, this.settings.concurrency - this.inFlight);
        const claimed = await this.claim(room);
        for (const delivery of claimed) this.start(delivery);
        if (claimed.length < room) return;
      }
    } catch (error) {
      if (!this.closed) this.logger.warn(`claiming deliveries: ${(error as Error).message}`);
    }
  }

  /**
   * Up to `limit` due deliveries, taken in turns across applications: each application's earliest
   * due ones, its turn counted after what it has in flight already, so that one application's
   * backlog or hanging receivers (each holding a slot for the read timeout) cannot keep every other
   * application's deliveries waiting behind them (IX_deliveries_application_due finds each one's).
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const rows: Claimed[] = await this.dataSource.query(
      `WITH "busy" AS (
         SELECT "application_id", count(*)::int AS "sending" FROM "webhooks"."deliveries" WHERE "status" = 'delivering' GROUP BY "application_id"
       ), "candidates" AS (
         SELECT c."id", c."next_attempt_at", COALESCE(b."sending", 0) + row_number() OVER (PARTITION BY a."application_id" ORDER BY c."next_attempt_at") AS "turn"
           FROM (SELECT DISTINCT "application_id" FROM "webhooks"."subscriptions") a
           CROSS JOIN LATERAL (
             SELECT d."id", d."next_attempt_at" FROM "webhooks"."deliveries" d
              WHERE d."application_id" = a."application_id" AND d."status" = 'pending' AND d."next_attempt_at" <= now()
              ORDER BY d."next_attempt_at" LIMIT $1
           ) c
           LEFT JOIN "busy" b ON b."application_id" = a."application_id"
       ), "due" AS (
         SELECT d."id" FROM "webhooks"."deliveries" d
          WHERE d."id" IN (SELECT "id" FROM "candidates" ORDER BY "turn", "next_attempt_at" LIMIT $1) AND d."status" = 'pending'
          FOR UPDATE SKIP LOCKED
       ), "claimed" AS (
         UPDATE "webhooks"."deliveries" d SET "status" = 'delivering', "lease_until" = now() + make_interval(secs => $2::float8 / 1000)
         FROM "due" WHERE d."id" = "due"."id"
         RETURNING d."id", d."subscription_id", d."application_id", d."event_id", d."event_type", d."body", d."test", d."attempts"
       )
       SELECT c.*, s."url", s."environment", CASE WHEN s."deleted_at" IS NULL THEN s."status" ELSE 'deleted' END AS "subscription_status", s."secret_sealed",
              CASE WHEN s."previous_secret_until" > now() THEN s."previous_secret_sealed" END AS "previous_secret_sealed"
         FROM "claimed" c JOIN "webhooks"."subscriptions" s ON s."id" = c."subscription_id"`,
      [limit, this.settings.leaseMs],
    );
    return rows;
  }

  /** Claims whose worker died (or overran the lease) go back to the queue. */
  private async releaseExpiredLeases(): Promise<void> {
    try {
      await this.dataSource.query(
        `UPDATE "webhooks"."deliveries" SET "status" = 'pending', "lease_until" = NULL
         WHERE "status" = 'delivering' AND "lease_until" < now()`,
      );
    } catch (error) {
      if (!this.closed) this.logger.warn(`releasing expired claims: ${(error as Error).message}`);
    }
  }

  private start(delivery: Claimed): void {
    this.inFlight += 1;
    const send = this.deliver(delivery)
      .then((finished) => this.finish(finished))
      .catch((error) => this.logger.warn(`delivery ${delivery.id}: ${(error as Error).message}`))
      .finally(() => {
        this.inFlight -= 1;
        this.sends.delete(send);
        this.kick();
      });
    this.sends.add(send);
  }

  private async deliver(delivery: Claimed): Promise<Finished> {
    if (delivery.subscription_status !== 'enabled' && !delivery.test) {
      return { delivery, headers: {}, result: null, skipped: `the subscription is ${delivery.subscription_status}` };
    }
    const headers = webhookHeaders({
      secret: openWebhookSecret(delivery.secret_sealed, this.settings.secretKey),
      // A day after a rotation the old secret signs too (a second v1= value), for receivers switching over.
      ...(delivery.previous_secret_sealed ? { previousSecret: openWebhookSecret(delivery.previous_secret_sealed, this.settings.secretKey) } : {}),
      timestamp: Math.floor(Date.now() / 1000),
      eventId: delivery.event_id,
      eventType: delivery.event_type,
      rawBody: delivery.body,
    });
    const result = await this.sender.send({ url: delivery.url, environment: delivery.environment, headers, body: delivery.body });
    return { delivery, headers, result };
  }

  private finish(finished: Finished): void {
    this.finished.push(finished);
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (this.flushing) {
      // One writer at a time; the running one picks this batch up when it ends.
      void this.flushing.then(() => this.finished.length > 0 && !this.flushTimer && this.flush());
      return;
    }
    const batch = this.finished.splice(0, this.finished.length);
    if (batch.length === 0) return;
    this.flushing = this.writeEach(batch)
      .finally(() => {
        this.flushing = undefined;
        if (this.finished.length > 0 && !this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
      });
  }

  /**
   * Writes a batch in one transaction; if that fails, each outcome alone, so that one that cannot be
   * written does not roll back the others (they would stay claimed, and be sent again when the lease ends).
   */
  private async writeEach(batch: Finished[]): Promise<void> {
    try {
      await this.write(batch);
      return;
    } catch (error) {
      if (batch.length === 1) {
        this.logger.warn(`recording the outcome of delivery ${batch[0].delivery.id}: ${(error as Error).message}`);
        return;
      }
      this.logger.warn(`recording ${batch.length} delivery outcomes together failed (${(error as Error).message}); recording them one by one`);
    }
    for (const finished of batch) {
      await this.write([finished]).catch((error) => this.logger.warn(`recording the outcome of delivery ${finished.delivery.id}: ${(error as Error).message}`));
    }
  }

  private async write(batch: Finished[]): Promise<void> {
    const now = new Date();
    const failedEvents: OutboxEvent[] = [];
    const ended: Array<{ subscription: string; application: string; outcome: 'succeeded' | 'failed'; test: boolean }> = [];
    const deliveries: Array<[string, string, number, Date | null, Date | null, string | null]> = [];
    const attempts: Array<[string, number, Date, number, string, number | null, string | null, string | null, Date | null]> = [];
    for (const { delivery, headers, result, skipped } of batch) {
      const attempt = delivery.attempts + 1;
      const outcome: AttemptOutcome = result ? result.outcome : { kind: 'http_error', status: 0 };
      const step = skipped ? 'failed' : nextStep(outcome, attempt, this.settings.retryWaits, now);
      const retryAt = typeof step === 'object' ? step.retryAt : null;
      const status = typeof step === 'object' ? 'pending' : step;
      deliveries.push([delivery.id, status, skipped ? delivery.attempts : attempt, retryAt, status === 'pending' ? null : now, skipped ? `not sent: ${skipped}` : null]);
      if (result) {
        attempts.push([
          delivery.id,
          attempt,
          result.startedAt,
          result.durationMs,
          JSON.stringify(headers),
          result.responseStatus,
          result.responseExcerpt,
          result.error,
          retryAt,
        ]);
      }
      // A delivery not sent (its subscription was disabled or deleted meanwhile) is no failure of the receiver's: not counted.
      if (status !== 'pending' && !skipped) ended.push({ subscription: delivery.subscription_id, application: delivery.application_id, outcome: status, test: delivery.test });
      if (status === 'failed') {
        failedEvents.push(
          outboxRow({
            type: 'webhook.delivery_failed',
            applicationId: delivery.application_id,
            internal: true,
            occurredAt: now,
            data: {
              delivery_id: delivery.id,
              subscription_id: delivery.subscription_id,
              event_id: delivery.event_id,
              event_type: delivery.event_type,
              test: delivery.test,
              attempts: skipped ? delivery.attempts : attempt,
              response_status: result?.responseStatus ?? null,
              error: skipped ?? result?.error ?? (result?.responseStatus ? `HTTP ${result.responseStatus}` : null),
            },
          }),
        );
      }
    }
    await this.dataSource.transaction(async (manager) => {
      if (attempts.length > 0) {
        await manager.query(
          `INSERT INTO "webhooks"."delivery_attempts"
             ("delivery_id", "attempt", "started_at", "duration_ms", "request_headers", "response_status", "response_excerpt", "error", "next_attempt_at")
           SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int[], $5::jsonb[], $6::int[], $7::text[], $8::text[], $9::timestamptz[])
           ON CONFLICT ("delivery_id", "attempt") DO NOTHING`,
          [0, 1, 2, 3, 4, 5, 6, 7, 8].map((column) => attempts.map((row) => row[column])),
        );
      }
      await manager.query(
        `UPDATE "webhooks"."deliveries" d SET "status" = u."status", "attempts" = u."attempts", "next_attempt_at" = u."next_attempt_at",
           "completed_at" = u."completed_at", "lease_until" = NULL, "failure_reason" = u."failure_reason"
         FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::text[]) AS u("id", "status", "attempts", "next_attempt_at", "completed_at", "failure_reason")
         WHERE d."id" = u."id" AND d."status" = 'delivering'`,
        [0, 1, 2, 3, 4, 5].map((column) => deliveries.map((row) => row[column])),
      );
      failedEvents.push(...(await this.countFailures(manager, ended, now)));
      await insertOutboxRows(manager, failedEvents);
    });
    if (failedEvents.length > 0) this.outbox.kick();
    // A subscription disabled here is disabled in every country (SubscriptionReplicator).
    const disabled = failedEvents.filter((event) => event.type === 'webhook.subscription_disabled').map((event) => event.data.subscription_id as string);
    if (disabled.length > 0) this.replicator.push(await this.dataSource.getRepository(WebhookSubscription).findBy({ id: In(disabled) }));
  }

  /** Applies ended deliveries to their subscriptions' consecutive-failure counts, disabling at five. */
  private async countFailures(
    manager: EntityManager,
    ended: Array<{ subscription: string; application: string; outcome: 'succeeded' | 'failed'; test: boolean }>,
    now: Date,
  ): Promise<OutboxEvent[]> {
    const counted = ended.filter((item) => !item.test);
    if (counted.length === 0) return [];
    const ids = [...new Set(counted.map((item) => item.subscription))];
    const rows: Array<{ id: string; consecutive_failures: number; status: string }> = await manager.query(
      `SELECT "id", "consecutive_failures", "status" FROM "webhooks"."subscriptions" WHERE "id" = ANY($1::text[]) ORDER BY "id" FOR UPDATE`,
      [ids],
    );
    const events: OutboxEvent[] = [];
    for (const row of rows) {
      let counter = row.consecutive_failures;
      let disable = false;
      for (const item of counted.filter((candidate) => candidate.subscription === row.id)) {
        const next = afterDeliveryEnded(counter, item.outcome, false);
        counter = next.counter;
        disable = disable || next.disable;
      }
      const disabling = disable && row.status === 'enabled';
      await manager.query(
        `UPDATE "webhooks"."subscriptions" SET "consecutive_failures" = $2, "updated_at" = CASE WHEN $4 THEN $3 ELSE "updated_at" END,
           "revision" = "revision" + CASE WHEN $4 THEN 1 ELSE 0 END,
           "status" = CASE WHEN $4 THEN 'disabled' ELSE "status" END,
           "disabled_reason" = CASE WHEN $4 THEN 'five consecutive failed deliveries' ELSE "disabled_reason" END
         WHERE "id" = $1`,
        [row.id, counter, now, disabling],
      );
      if (disabling) {
        const application = counted.find((item) => item.subscription === row.id)!.application;
        events.push(
          outboxRow({
            type: 'webhook.subscription_disabled',
            applicationId: application,
            internal: true,
            occurredAt: now,
            data: { subscription_id: row.id, reason: 'five consecutive failed deliveries', actor: { type: 'system' } },
          }),
        );
      }
    }
    return events;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    await Promise.allSettled([...this.sends]);
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flush();
    }
    await this.flushing;
  }
}
