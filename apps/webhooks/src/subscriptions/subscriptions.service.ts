import { Injectable } from '@nestjs/common';
import {
  AuditActor,
  WebhookActionRequest,
  WebhookCreateRequest,
  WebhookRefRequest,
  WebhookSubscriptionMessage,
  WebhookWithSecretMessage,
  ListPart,
} from '@dcr/contracts';
import { DomainError, isWebhookEventType, newOpaqueId, newWebhookSecret, notFound, sealWebhookSecret, validateWebhookUrl } from '@dcr/domain';
import { recordEvent, snapshotPart } from '@dcr/service-kit';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { WebhooksOutboxRelay } from '../webhooks-outbox';
import { WebhooksSettings } from '../webhooks-settings';
import { WebhookSubscription } from './subscription.entity';
import { SubscriptionReplicator } from './subscription-replicator';

export function subscriptionMessage(row: WebhookSubscription): WebhookSubscriptionMessage {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status as 'enabled' | 'disabled',
    consecutive_failures: row.consecutiveFailures,
    disabled_reason: row.disabledReason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * Subscriptions of an application: every read and change is scoped to the application the gateway
 * authenticated, every change goes onto the audit trail in the same transaction, and every change
 * (wherever it is made) bumps the revision and goes to the peer countries (SubscriptionReplicator).
 */
/** How long a rotated secret goes on signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60_000;

@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: WebhooksSettings,
    private readonly outbox: WebhooksOutboxRelay,
    private readonly replicator: SubscriptionReplicator,
  ) {}

  async create(request: WebhookCreateRequest): Promise<WebhookWithSecretMessage> {
    const url = validateWebhookUrl(request.url, { environment: request.environment, localTargets: this.settings.localTargets });
    const unknown = request.events.filter((event) => !isWebhookEventType(event));
    if (unknown.length > 0) {
      throw new DomainError('validation_failed', `Unknown event types: ${unknown.join(', ')}`, [{ field: 'events', reason: `unknown event type ${unknown[0]}` }]);
    }
    const secret = newWebhookSecret();
    const now = new Date();
    const row = Object.assign(new WebhookSubscription(), {
      id: newOpaqueId('whk', 20),
      applicationId: request.application_id,
      url,
      events: [...new Set(request.events)],
      environment: request.environment,
      status: 'enabled',
      secretSealed: sealWebhookSecret(secret, this.settings.secretKey),
      consecutiveFailures: 0,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
      revision: 1,
    });
    await this.change(request.application_id, request.actor, 'webhook.subscription_created', { subscription_id: row.id, url, events: row.events }, async (manager) => {
      await manager.insert(WebhookSubscription, row);
      return { row, value: undefined };
    });
    return { ...subscriptionMessage(row), secret };
  }

  /** The application's subscriptions, a part at a time (snapshotPart, by creation time and id). */
  async list(applicationId: string, after?: string): Promise<ListPart<WebhookSubscriptionMessage>> {
    const rows = await this.dataSource.getRepository(WebhookSubscription).find({
      where: { applicationId, deletedAt: IsNull() },
      order: { createdAt: 'ASC' },
    });
    return snapshotPart(rows.map(subscriptionMessage), (item) => `${item.created_at}#${item.id}`, after);
  }

  async get(request: WebhookRefRequest): Promise<WebhookSubscriptionMessage> {
    return subscriptionMessage(await this.find(this.dataSource.manager, request.application_id, request.id));
  }

  async remove(request: WebhookActionRequest): Promise<void> {
    await this.change(request.application_id, request.actor, 'webhook.subscription_deleted', { subscription_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      const now = new Date();
      Object.assign(row, { deletedAt: now, status: 'disabled', disabledReason: 'deleted', updatedAt: now, revision: row.revision + 1 });
      await manager.save(row);
      // What was still queued for it will not be sent.
      await manager.query(
        `UPDATE "webhooks"."deliveries" SET "status" = 'failed', "completed_at" = now(), "next_attempt_at" = NULL, "lease_until" = NULL
         WHERE "subscription_id" = $1 AND "status" = 'pending'`,
        [row.id],
      );
      return { row, value: undefined };
    });
  }

  async enable(request: WebhookActionRequest): Promise<WebhookSubscriptionMessage> {
    return this.change(request.application_id, request.actor, 'webhook.subscription_enabled', { subscription_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      Object.assign(row, { status: 'enabled', consecutiveFailures: 0, disabledReason: null, updatedAt: new Date(), revision: row.revision + 1 });
      await manager.save(row);
      return { row, value: subscriptionMessage(row) };
    });
  }

  async rotateSecret(request: WebhookActionRequest): Promise<WebhookWithSecretMessage> {
    const secret = newWebhookSecret();
    return this.change(request.application_id, request.actor, 'webhook.secret_rotated', { subscription_id: request.id }, async (manager) => {
      const row = await this.find(manager, request.application_id, request.id, true);
      const now = new Date();
      // The secret rotated away signs beside the new one for a day (PREVIOUS_SECRET_MS): a receiver switching over loses nothing.
      Object.assign(row, {
        previousSecretSealed: row.secretSealed,
        previousSecretUntil: new Date(now.getTime() + PREVIOUS_SECRET_MS),
        secretSealed: sealWebhookSecret(secret, this.settings.secretKey),
        updatedAt: now,
        revision: row.revision + 1,
      });
      await manager.save(row);
      return { row, value: { ...subscriptionMessage(row), secret, previous_secret_expires_at: row.previousSecretUntil!.toISOString() } };
    });
  }

  async find(manager: EntityManager, applicationId: string, id: string, lock = false): Promise<WebhookSubscription> {
    const row = await manager.getRepository(WebhookSubscription).findOne({
      where: { id, applicationId, deletedAt: IsNull() },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!row) throw notFound('Webhook');
    return row;
  }

  /** A change and its audit event in one transaction; once committed, the changed subscription goes to the peers. */
  private async change<T>(
    applicationId: string,
    actor: AuditActor,
    type: string,
    detail: Record<string, unknown>,
    work: (manager: EntityManager) => Promise<{ row: WebhookSubscription; value: T }>,
  ): Promise<T> {
    const { row, value } = await this.dataSource.transaction(async (manager) => {
      const changed = await work(manager);
      await recordEvent(manager, { type, applicationId, internal: true, data: { ...detail, actor } });
      return changed;
    });
    this.outbox.kick();
    this.replicator.push([row]);
    return value;
  }
}
