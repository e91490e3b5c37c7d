import { Injectable } from '@nestjs/common';
import { WebhookEventInput, WebhookReplayRequest, WebhookRefRequest, WebhookDeliveryMessage } from '@dcr/contracts';
import { DomainError, newOpaqueId, notFound, WEBHOOK_TEST_EVENT, webhookBody } from '@dcr/domain';
import { recordEvent } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { WebhooksOutboxRelay } from '../webhooks-outbox';
import { DeliveriesReader } from './deliveries-reader';
import { DeliveryDispatcher } from './delivery-dispatcher';

/** Why an event's delivery to a disabled subscription failed without being sent. */
export const DISABLED_WHEN_IT_HAPPENED = 'not sent: the subscription was disabled when the event happened; replay it once the subscription is enabled';

/**
 * Puts deliveries on the durable queue: one per event and subscribed subscription (a redelivered
 * event is recognised by the unique (subscription, event id) and not queued twice), test deliveries
 * and replays, then wakes the dispatcher.
 */
@Injectable()
export class DeliveryQueue {
  constructor(
    private readonly dataSource: DataSource,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly subscriptions: SubscriptionsService,
    private readonly reader: DeliveriesReader,
    private readonly outbox: WebhooksOutboxRelay,
  ) {}

  /**
   * Queues each event for every subscription of its application that selected it: pending for an
   * enabled subscription, failed at once (DISABLED_WHEN_IT_HAPPENED) for a disabled one.
   */
  async enqueue(events: WebhookEventInput[]): Promise<number> {
    const applications = [...new Set(events.map((event) => event.application_id))];
    // A disabled subscription gets its events too, as failed deliveries saying why (not sent, not
    // counted): the organisation sees what it missed and replays it once it enables the subscription.
    const subscribed: Array<{ id: string; application_id: string; events: string[]; status: string }> = await this.dataSource.query(
      `SELECT "id", "application_id", "events", "status" FROM "webhooks"."subscriptions"
       WHERE "application_id" = ANY($1::text[]) AND "status" IN ('enabled', 'disabled') AND "deleted_at" IS NULL`,
      [applications],
    );
    if (subscribed.length === 0) return 0;
    const rows: Array<[string, string, string, string, string, string, string, string | null]> = [];
    for (const event of events) {
      const body = webhookBody({ event: event.type, id: event.id, createdAt: event.occurred_at, applicationId: event.application_id, data: event.data });
      for (const subscription of subscribed) {
        if (subscription.application_id !== event.application_id || !subscription.events.includes(event.type)) continue;
        const held = subscription.status !== 'enabled';
        rows.push([newOpaqueId('whd', 20), subscription.id, event.application_id, event.id, event.type, body, held ? 'failed' : 'pending', held ? DISABLED_WHEN_IT_HAPPENED : null]);
      }
    }
    if (rows.length === 0) return 0;
    const inserted: Array<{ status: string }> = await this.dataSource.query(
      `INSERT INTO "webhooks"."deliveries"
         ("id", "subscription_id", "application_id", "event_id", "event_type", "body", "status", "failure_reason", "test", "attempts", "next_attempt_at", "completed_at", "created_at")
       SELECT d."id", d."subscription_id", d."application_id", d."event_id", d."event_type", d."body", d."status", d."failure_reason", false, 0,
              CASE WHEN d."status" = 'pending' THEN now() END, CASE WHEN d."status" = 'failed' THEN now() END, now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
              AS d("id", "subscription_id", "application_id", "event_id", "event_type", "body", "status", "failure_reason")
       ON CONFLICT ("subscription_id", "event_id") WHERE "test" = false AND "replay_of" IS NULL DO NOTHING
       RETURNING "status"`,
      [0, 1, 2, 3, 4, 5, 6, 7].map((column) => rows.map((row) => row[column])),
    );
    if (inserted.some((row) => row.status === 'pending')) this.dispatcher.kick();
    return inserted.length;
  }

  /** A signed `webhook.test` event through the same pipeline; it never counts towards disablement. */
  async test(request: WebhookRefRequest): Promise<WebhookDeliveryMessage> {
    const subscription = await this.subscriptions.find(this.dataSource.manager, request.application_id, request.id);
    const eventId = newOpaqueId('evt', 20);
    const now = new Date().toISOString();
    const body = webhookBody({
      event: WEBHOOK_TEST_EVENT,
      id: eventId,
      createdAt: now,
      applicationId: request.application_id,
      data: { message: 'A test delivery from the Decision Service', subscription_id: subscription.id },
    });
    const id = newOpaqueId('whd', 20);
    await this.dataSource.query(
      `INSERT INTO "webhooks"."deliveries"
         ("id", "subscription_id", "application_id", "event_id", "event_type", "body", "status", "test", "attempts", "next_attempt_at", "created_at")
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', true, 0, now(), now())`,
      [id, subscription.id, request.application_id, eventId, WEBHOOK_TEST_EVENT, body],
    );
    this.dispatcher.kick();
    return this.reader.get(request.application_id, id);
  }

  /** Sends a delivery's event again, as a new delivery with the same event id and body, freshly signed. */
  async replay(request: WebhookReplayRequest): Promise<WebhookDeliveryMessage> {
    const id = newOpaqueId('whd', 20);
    await this.dataSource.transaction(async (manager) => {
      const [original] = await manager.query(
        `SELECT d."id", d."subscription_id", d."event_id", d."event_type", d."body", d."test", s."status" AS "subscription_status" FROM "webhooks"."deliveries" d
           JOIN "webhooks"."subscriptions" s ON s."id" = d."subscription_id" AND s."deleted_at" IS NULL
         WHERE d."id" = $1 AND d."application_id" = $2`,
        [request.delivery_id, request.application_id],
      );
      if (!original) throw notFound('Webhook delivery');
      // A disabled subscription sends nothing: a replay queued there would fail without an attempt.
      if (original.subscription_status === 'disabled') {
        throw new DomainError('conflict', 'The subscription is disabled: enable it (POST …/webhooks/<id>/enable) before replaying its deliveries', [
          { field: 'subscription', reason: `${original.subscription_id} is disabled` },
        ]);
      }
      await manager.query(
        `INSERT INTO "webhooks"."deliveries"
           ("id", "subscription_id", "application_id", "event_id", "event_type", "body", "status", "test", "replay_of", "attempts", "next_attempt_at", "created_at")
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, 0, now(), now())`,
        [id, original.subscription_id, request.application_id, original.event_id, original.event_type, original.body, original.test, original.id],
      );
      await recordEvent(manager, {
        type: 'webhook.delivery_replayed',
        applicationId: request.application_id,
        internal: true,
        data: { delivery_id: id, replay_of: original.id, subscription_id: original.subscription_id, event_id: original.event_id, actor: request.actor },
      });
    });
    this.outbox.kick();
    this.dispatcher.kick();
    return this.reader.get(request.application_id, id);
  }
}
