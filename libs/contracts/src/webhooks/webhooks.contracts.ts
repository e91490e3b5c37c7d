import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { AuditActor } from '../audit';
import { OutboxEventInput } from '../events';
import { APPLICATION_ID } from '../patterns';
import { SnapshotPartReply, SnapshotPartRequest } from '../snapshot-parts';

/**
 * webhooks: subscriptions, the durable delivery queue and its attempts. Producers enqueue from their
 * outboxes (request/reply: a row is marked only once its deliveries are stored); the gateway manages
 * subscriptions and reads deliveries for the application it authenticated.
 */
export const WEBHOOKS_ENQUEUE = 'webhooks.enqueue';
export const WEBHOOKS_CREATE = 'webhooks.subscriptions.create';
export const WEBHOOKS_LIST = 'webhooks.subscriptions.list';
export const WEBHOOKS_GET = 'webhooks.subscriptions.get';
export const WEBHOOKS_DELETE = 'webhooks.subscriptions.delete';
export const WEBHOOKS_ENABLE = 'webhooks.subscriptions.enable';
export const WEBHOOKS_ROTATE_SECRET = 'webhooks.subscriptions.rotate-secret';
export const WEBHOOKS_TEST = 'webhooks.subscriptions.test';
export const WEBHOOKS_DELIVERIES = 'webhooks.deliveries.list';
export const WEBHOOKS_DELIVERY_GET = 'webhooks.deliveries.get';
export const WEBHOOKS_REPLAY = 'webhooks.deliveries.replay';
/** Which application a delivery belongs to, so the gateway can check the caller may see it first. */
export const WEBHOOKS_DELIVERY_OWNER = 'webhooks.deliveries.owner';
/**
 * webhooks → peer countries' webhooks: subscriptions after a change. A subscription is configuration,
 * not personal data: made in one country, it is in force in every country, so the events of people
 * homed anywhere reach it (each country delivers its own people's events).
 */
export const WEBHOOKS_SUBSCRIPTIONS_CHANGED = 'webhooks.subscriptions.changed';
/** Request for every subscription a country holds; asked of each peer at start and every minute. */
export const WEBHOOKS_SUBSCRIPTIONS_SNAPSHOT = 'webhooks.subscriptions.snapshot';

export const WEBHOOK_ID = /^whk_[0-9a-z]{20}$/;
export const WEBHOOK_DELIVERY_ID = /^whd_[0-9a-z]{20}$/;

/** The events a producer hands over (see OutboxEventInput). */
export class WebhookEventInput extends OutboxEventInput {}

export class WebhooksEnqueueRequest {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => WebhookEventInput)
  events: WebhookEventInput[];
}

export interface WebhooksEnqueueReply {
  /** Deliveries created (an event already queued for a subscription is not queued again). */
  deliveries: number;
}

class ApplicationScoped {
  @Matches(APPLICATION_ID)
  application_id: string;
}

class ActorScoped extends ApplicationScoped {
  @ValidateNested()
  @Type(() => AuditActor)
  actor: AuditActor;
}

export class WebhookCreateRequest extends ActorScoped {
  @IsIn(['sandbox', 'production'])
  environment: 'sandbox' | 'production';

  @IsString()
  @Length(1, 2048)
  url: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  events: string[];
}

export class WebhookRefRequest extends ApplicationScoped {
  @Matches(WEBHOOK_ID)
  id: string;
}

export class WebhookActionRequest extends ActorScoped {
  @Matches(WEBHOOK_ID)
  id: string;
}

export class WebhookListRequest extends ApplicationScoped {
  /** The subscriptions after this key (`<created_at>#<id>`), for a list longer than one message (ListPart). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  after?: string;
}

export interface WebhookSubscriptionMessage {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  /** Failed deliveries in a row (test deliveries excluded); five disable the subscription. */
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookWithSecretMessage extends WebhookSubscriptionMessage {
  /** Shown once: at creation and after a rotation. */
  secret: string;
  /** After a rotation: until when the secret before it signs beside it. */
  previous_secret_expires_at?: string;
}

/**
 * A subscription as it travels between countries: its whole configuration, the revision that orders
 * its changes (the higher one wins; equal revisions, the later `updated_at`), and its signing secret
 * sealed for the peers (AES-256-GCM under a key every country derives from SUBJECT_REF_KEY, bound
 * to the subscription id and revision), never in clear. Delivery health (the consecutive-failure
 * count) is each country's own.
 */
export class WebhookSubscriptionReplica {
  @Matches(WEBHOOK_ID)
  id: string;

  @Matches(APPLICATION_ID)
  application_id: string;

  @IsString()
  @Length(1, 2048)
  url: string;

  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  events: string[];

  @IsIn(['sandbox', 'production'])
  environment: 'sandbox' | 'production';

  @IsIn(['enabled', 'disabled'])
  status: 'enabled' | 'disabled';

  @IsOptional()
  @IsString()
  disabled_reason: string | null;

  @IsString()
  @Length(1, 1024)
  secret_sealed_for_peers: string;

  /** The secret before the last rotation, sealed for the peers the same way, and until when it signs beside the new one. */
  @IsOptional()
  @IsString()
  @Length(1, 1024)
  previous_secret_sealed_for_peers?: string;

  @IsOptional()
  @IsISO8601()
  previous_secret_until?: string;

  @IsInt()
  @Min(1)
  revision: number;

  @IsISO8601()
  created_at: string;

  @IsISO8601()
  updated_at: string;

  @IsOptional()
  @IsISO8601()
  deleted_at: string | null;
}

export class WebhookSubscriptionsChangedEvent {
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => WebhookSubscriptionReplica)
  subscriptions: WebhookSubscriptionReplica[];
}

export class WebhookSubscriptionsSnapshotRequest extends SnapshotPartRequest {}

export interface WebhookSubscriptionsSnapshotReply extends SnapshotPartReply {
  subscriptions: WebhookSubscriptionReplica[];
}

export class WebhookDeliveriesRequest extends ApplicationScoped {
  @Matches(WEBHOOK_ID)
  subscription_id: string;

  @IsOptional()
  @Matches(WEBHOOK_DELIVERY_ID)
  before?: string;

  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;
}

export class WebhookDeliveryRequest extends ApplicationScoped {
  @Matches(WEBHOOK_DELIVERY_ID)
  delivery_id: string;
}

export class WebhookDeliveryOwnerRequest {
  @Matches(WEBHOOK_DELIVERY_ID)
  delivery_id: string;
}

export class WebhookReplayRequest extends WebhookDeliveryRequest {
  @ValidateNested()
  @Type(() => AuditActor)
  actor: AuditActor;
}

export interface WebhookAttemptMessage {
  attempt: number;
  started_at: string;
  duration_ms: number;
  /** The HTTP status, or null after a timeout or a network error. */
  response_status: number | null;
  /** The first 1 KiB of the response body. */
  response_excerpt: string | null;
  error: string | null;
  /** Retried after this attempt: when the next one is due. */
  next_attempt_at: string | null;
}

export interface WebhookDeliveryMessage {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  test: boolean;
  replay_of: string | null;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  /** Why it failed without being sent (its subscription was disabled when the event happened, or before a retry); null otherwise. */
  failure_reason: string | null;
  request: { url: string; headers: Record<string, string>; body: string };
  attempt_log: WebhookAttemptMessage[];
}

export interface WebhookDeliveriesReply {
  deliveries: WebhookDeliveryMessage[];
  has_more: boolean;
}
