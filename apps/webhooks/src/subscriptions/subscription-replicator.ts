import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import {
  WEBHOOKS_SUBSCRIPTIONS_CHANGED,
  WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT,
  WebhookSubscriptionReplica,
  WebhookSubscriptionsChangedEvent,
  WebhookSubscriptionsSnapshotReply,
  WebhookSubscriptionsSnapshotRequest,
} from '@dcr/contracts';
import { openWebhookSecret, sealWebhookSecret } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext, snapshotPart } from '@dcr/service-kit';
import { DataSource } from 'typeorm';
import { WebhooksSettings } from '../webhooks-settings';
import { WebhookSubscription } from './subscription.entity';

/** What a replica's sealed secret is bound to: its subscription and the revision that carries it. */
const peerSealContext = (id: string, revision: number): string => `webhook-subscription:${id}:${revision}`;
/** The previous secret's context: a sealed value cannot pass for the other. */
const previousSealContext = (id: string, revision: number): string => `${peerSealContext(id, revision)}:previous`;

/**
 * Subscriptions are configuration, in force in every country: an application subscribes once, and
 * each country delivers the events of the people homed there. A change made in any country bumps
 * the subscription's revision and is pushed to every peer; each country also pulls every
 * subscription its peers hold at start and every minute, which heals a push lost while a peer was
 * down. A country keeps the highest revision (equal revisions: the later `updated_at`). The signing
 * secret travels sealed under a key derived from SUBJECT_REF_KEY, and each country keeps it sealed
 * under its own WEBHOOK_SECRET_KEY. Deliveries, their attempts and the consecutive-failure count
 * stay in the country that sent them (their bodies are about its people).
 */
@Injectable()
export class SubscriptionReplicator implements OnApplicationBootstrap {
  private readonly logger = new Logger(SubscriptionReplicator.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: WebhooksSettings,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  onApplicationBootstrap(): void {
    // Peers may still be starting; the periodic pull catches up with them.
    void this.pullFromPeers();
  }

  /** Sends changed subscriptions (as committed) to every peer. */
  push(rows: WebhookSubscription[]): void {
    if (rows.length === 0) return;
    const event: WebhookSubscriptionsChangedEvent = { subscriptions: rows.map((row) => this.toReplica(row)) };
    this.clients.emitToPeers(WEBHOOKS_SUBSCRIPTIONS_CHANGED, event, this.logger, 'subscription push');
  }

  /**
   * Stores the replicas that are newer than what this country holds. A replica that arrives deleted
   * ends what was still queued here for it, as a deletion made here does.
   */
  async receive(replicas: WebhookSubscriptionReplica[]): Promise<void> {
    for (const replica of replicas) {
      let secretSealed: string;
      let previousSealed: string | null = null;
      try {
        const secret = openWebhookSecret(replica.secret_sealed_for_peers, this.settings.peerKey, peerSealContext(replica.id, replica.revision));
        secretSealed = sealWebhookSecret(secret, this.settings.secretKey);
        if (replica.previous_secret_sealed_for_peers && replica.previous_secret_until) {
          const previous = openWebhookSecret(replica.previous_secret_sealed_for_peers, this.settings.peerKey, previousSealContext(replica.id, replica.revision));
          previousSealed = sealWebhookSecret(previous, this.settings.secretKey);
        }
      } catch (error) {
        // Another SUBJECT_REF_KEY, or an altered message: nothing of it is kept.
        this.logger.warn(`subscription ${replica.id} from a peer skipped: its secret does not open (${(error as Error).message})`);
        continue;
      }
      await this.dataSource.transaction(async (manager) => {
        const stored: unknown[] = await manager.query(
          `INSERT INTO "webhooks"."subscriptions" AS s
             ("id", "application_id", "url", "events", "environment", "status", "secret_sealed", "consecutive_failures",
              "disabled_reason", "created_at", "updated_at", "deleted_at", "revision", "previous_secret_sealed", "previous_secret_until")
           VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10, $11, $12, $13, $14)
           ON CONFLICT ("id") DO UPDATE SET
             "url" = EXCLUDED."url", "events" = EXCLUDED."events", "environment" = EXCLUDED."environment",
             "status" = EXCLUDED."status", "secret_sealed" = EXCLUDED."secret_sealed",
             "previous_secret_sealed" = EXCLUDED."previous_secret_sealed", "previous_secret_until" = EXCLUDED."previous_secret_until",
             "disabled_reason" = EXCLUDED."disabled_reason", "updated_at" = EXCLUDED."updated_at",
             "deleted_at" = EXCLUDED."deleted_at", "revision" = EXCLUDED."revision",
             -- A peer's enable (or disable) starts this country's count afresh, as one made here does.
             "consecutive_failures" = CASE WHEN s."status" = EXCLUDED."status" THEN s."consecutive_failures" ELSE 0 END
           WHERE s."application_id" = EXCLUDED."application_id"
             AND (s."revision", s."updated_at") < (EXCLUDED."revision", EXCLUDED."updated_at")
           RETURNING "id"`,
          [
            replica.id,
            replica.application_id,
            replica.url,
            replica.events,
            replica.environment,
            replica.status,
            secretSealed,
            replica.disabled_reason ?? null,
            replica.created_at,
            replica.updated_at,
            replica.deleted_at ?? null,
            replica.revision,
            previousSealed,
            previousSealed ? replica.previous_secret_until : null,
          ],
        );
        if (stored.length > 0 && replica.deleted_at) {
          await manager.query(
            `UPDATE "webhooks"."deliveries" SET "status" = 'failed', "completed_at" = now(), "next_attempt_at" = NULL, "lease_until" = NULL
             WHERE "subscription_id" = $1 AND "status" = 'pending'`,
            [replica.id],
          );
        }
      });
    }
  }

  /**
   * Every subscription held here, deleted ones included (a peer must learn of a deletion too), a
   * part at a time (snapshotPart, by id).
   */
  async heldHere(after?: string): Promise<WebhookSubscriptionsSnapshotReply> {
    const rows = await this.dataSource.getRepository(WebhookSubscription).find({ order: { createdAt: 'ASC' } });
    const { items, ...cursor } = snapshotPart(rows.map((row) => this.toReplica(row)), (replica) => replica.id, after);
    return { subscriptions: items, ...cursor };
  }

  @Interval(60_000)
  async pullFromPeers(): Promise<void> {
    const request: WebhookSubscriptionsSnapshotRequest = { from_country: this.context.env.COUNTRY };
    await this.clients.askPeers<WebhookSubscriptionsSnapshotReply>(
      WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT,
      request,
      (reply) => this.receive(reply.subscriptions),
      this.logger,
      'subscription pull',
    );
  }

  private toReplica(row: WebhookSubscription): WebhookSubscriptionReplica {
    const secret = openWebhookSecret(row.secretSealed, this.settings.secretKey);
    return {
      id: row.id,
      application_id: row.applicationId,
      url: row.url,
      events: row.events,
      environment: row.environment as 'sandbox' | 'production',
      status: row.status as 'enabled' | 'disabled',
      disabled_reason: row.disabledReason,
      secret_sealed_for_peers: sealWebhookSecret(secret, this.settings.peerKey, peerSealContext(row.id, row.revision)),
      ...(row.previousSecretSealed && row.previousSecretUntil
        ? {
            previous_secret_sealed_for_peers: sealWebhookSecret(openWebhookSecret(row.previousSecretSealed, this.settings.secretKey), this.settings.peerKey, previousSealContext(row.id, row.revision)),
            previous_secret_until: row.previousSecretUntil.toISOString(),
          }
        : {}),
      revision: row.revision,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      deleted_at: row.deletedAt ? row.deletedAt.toISOString() : null,
    };
  }
}
