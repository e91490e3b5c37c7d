import { Injectable } from '@nestjs/common';
import { WebhookAttemptMessage, WebhookDeliveriesReply, WebhookDeliveriesRequest, WebhookDeliveryMessage } from '@dcr/contracts';
import { notFound } from '@dcr/domain';
import { leadingWithin } from '@dcr/service-kit';
import { DataSource } from 'typeorm';

const iso = (value: unknown) => (value ? (value as Date).toISOString() : null);

/** Deliveries as the debugger shows them: the request sent, every attempt and its answer. */
@Injectable()
export class DeliveriesReader {
  constructor(private readonly dataSource: DataSource) {}

  async list(request: WebhookDeliveriesRequest): Promise<WebhookDeliveriesReply> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT d.*, s."url" FROM "webhooks"."deliveries" d JOIN "webhooks"."subscriptions" s ON s."id" = d."subscription_id"
       WHERE d."subscription_id" = $1 AND d."application_id" = $2 AND s."deleted_at" IS NULL
         AND ($3::text IS NULL OR (d."created_at", d."id") < (SELECT "created_at", "id" FROM "webhooks"."deliveries" WHERE "id" = $3))
       ORDER BY d."created_at" DESC, d."id" DESC LIMIT $4`,
      [request.subscription_id, request.application_id, request.before ?? null, request.limit + 1],
    );
    // No deliveries of a subscription this application does not have (deleted, another's, none): not found, as its other routes answer.
    if (rows.length === 0) {
      const [subscription] = await this.dataSource.query(`SELECT 1 FROM "webhooks"."subscriptions" WHERE "id" = $1 AND "application_id" = $2 AND "deleted_at" IS NULL`, [request.subscription_id, request.application_id]);
      if (!subscription) throw notFound('Webhook');
    }
    // No more than fit one message on the bus (each delivery carries its body and its attempts): a
    // page cut short says there is more, and the next starts after its last delivery.
    const deliveries = leadingWithin(await this.withAttempts(rows.slice(0, request.limit)));
    return { deliveries, has_more: rows.length > deliveries.length };
  }

  async owner(deliveryId: string): Promise<{ application_id: string }> {
    const [row] = await this.dataSource.query(`SELECT "application_id" FROM "webhooks"."deliveries" WHERE "id" = $1`, [deliveryId]);
    if (!row) throw notFound('Webhook delivery');
    return { application_id: row.application_id as string };
  }

  async get(applicationId: string, deliveryId: string): Promise<WebhookDeliveryMessage> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT d.*, s."url" FROM "webhooks"."deliveries" d JOIN "webhooks"."subscriptions" s ON s."id" = d."subscription_id"
       WHERE d."id" = $1 AND d."application_id" = $2 AND s."deleted_at" IS NULL`,
      [deliveryId, applicationId],
    );
    if (rows.length === 0) throw notFound('Webhook delivery');
    return (await this.withAttempts(rows))[0];
  }

  private async withAttempts(rows: Array<Record<string, unknown>>): Promise<WebhookDeliveryMessage[]> {
    if (rows.length === 0) return [];
    const attempts: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT * FROM "webhooks"."delivery_attempts" WHERE "delivery_id" = ANY($1::text[]) ORDER BY "attempt"`,
      [rows.map((row) => row.id)],
    );
    return rows.map((row) => {
      const log: WebhookAttemptMessage[] = attempts
        .filter((attempt) => attempt.delivery_id === row.id)
        .map((attempt) => ({
          attempt: attempt.attempt as number,
          started_at: iso(attempt.started_at)!,
          duration_ms: attempt.duration_ms as number,
          response_status: (attempt.response_status as number | null) ?? null,
          response_excerpt: (attempt.response_excerpt as string | null) ?? null,
          error: (attempt.error as string | null) ?? null,
          next_attempt_at: iso(attempt.next_attempt_at),
        }));
      const lastHeaders = (attempts.filter((attempt) => attempt.delivery_id === row.id).pop()?.request_headers as Record<string, string>) ?? {};
      return {
        id: row.id as string,
        subscription_id: row.subscription_id as string,
        event_id: row.event_id as string,
        event_type: row.event_type as string,
        status: row.status as WebhookDeliveryMessage['status'],
        test: row.test as boolean,
        replay_of: (row.replay_of as string | null) ?? null,
        attempts: row.attempts as number,
        next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
        created_at: iso(row.created_at)!,
        completed_at: iso(row.completed_at),
        failure_reason: (row.failure_reason as string | null) ?? null,
        request: { url: row.url as string, headers: lastHeaders, body: row.body as string },
        attempt_log: log,
      };
    });
  }
}
