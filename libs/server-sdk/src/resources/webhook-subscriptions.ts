import { ApiRequester, RequestOptions, route, WithResponse } from '../requester';
import { ListParams, Page } from './common';

/** Event types a subscription may ask for (docs/webhooks.md); `webhook.test` is sent by `test` only. */
export const WEBHOOK_EVENT_TYPES = [
  'consent.granted',
  'consent.denied',
  'consent.revoked',
  'consent.purpose_revoked',
  'consent.modified',
  'approval.granted',
  'approval.approved',
  'approval.denied',
  'approval.countered',
  'approval.expired',
  'signature.signed',
  'signature.declined',
  'signature.expired',
  'signature.countered',
  'flow.activated',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookSubscriptionCreateParams {
  /** HTTPS (production); sandbox applications may also use http://127.0.0.1 or http://localhost. */
  url: string;
  events: WebhookEventType[];
}

export interface WebhookSubscription {
  /** `whk_…` */
  id: string;
  url: string;
  events: WebhookEventType[];
  status: 'enabled' | 'disabled';
  /** Failed deliveries in a row (test deliveries excluded); five disable the subscription. */
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookSubscriptionWithSecret extends WebhookSubscription {
  /** `whsec_…`, shown in this answer only: store it for `verifyWebhook`. */
  secret: string;
  /** After `rotateSecret`: until when the secret before it signs every delivery beside the new one. */
  previous_secret_expires_at?: string;
}

export interface WebhookDeliveryAttempt {
  attempt: number;
  started_at: string;
  duration_ms: number;
  response_status: number | null;
  /** The first 1 KiB of your endpoint's answer. */
  response_excerpt: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

export interface WebhookDelivery {
  /** `whd_…` */
  id: string;
  subscription_id: string;
  /** `X-Service-Event-ID`: the same on every attempt and replay. */
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  test: boolean;
  replay_of: string | null;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  completed_at: string | null;
  /** The request sent: URL, headers of the last attempt and the exact body signed. */
  request: { url: string; headers: Record<string, string>; body: string };
  attempt_log: WebhookDeliveryAttempt[];
}

/**
 * Webhook subscriptions of an application, their test deliveries and delivery log. Verify what
 * arrives at your endpoint with `verifyWebhook` from this package.
 */
export class WebhookSubscriptions {
  constructor(private readonly requester: ApiRequester) {}

  /** Subscribes a URL; the signing secret is in this answer only. */
  async create(applicationId: string, params: WebhookSubscriptionCreateParams, options?: RequestOptions): Promise<WithResponse<WebhookSubscriptionWithSecret>> {
    return this.requester.send<WebhookSubscriptionWithSecret>({ method: 'POST', path: route`/api/v1/applications/${applicationId}/webhooks`, body: params }, options);
  }

  async list(applicationId: string, params: ListParams = {}, options?: RequestOptions): Promise<WithResponse<Page<WebhookSubscription>>> {
    return this.requester.send<Page<WebhookSubscription>>({ method: 'GET', path: route`/api/v1/applications/${applicationId}/webhooks`, query: { ...params } }, options);
  }

  async get(applicationId: string, webhookId: string, options?: RequestOptions): Promise<WithResponse<WebhookSubscription>> {
    return this.requester.send<WebhookSubscription>({ method: 'GET', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}` }, options);
  }

  /** Deletes the subscription; what is still queued for it is not sent. */
  async delete(applicationId: string, webhookId: string, options?: RequestOptions): Promise<void> {
    await this.requester.send<void>({ method: 'DELETE', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}` }, options);
  }

  /** Sends a signed `webhook.test` event through the delivery pipeline (never counts towards disabling); answers the queued delivery. */
  async test(applicationId: string, webhookId: string, options?: RequestOptions): Promise<WithResponse<WebhookDelivery>> {
    return this.requester.send<WebhookDelivery>({ method: 'POST', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}/test` }, options);
  }

  /** Enables a subscription again and resets its failure count. */
  async enable(applicationId: string, webhookId: string, options?: RequestOptions): Promise<WithResponse<WebhookSubscription>> {
    return this.requester.send<WebhookSubscription>({ method: 'POST', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}/enable` }, options);
  }

  /** A new signing secret, in this answer only; it signs every delivery from now on and the old one stops at once. */
  async rotateSecret(applicationId: string, webhookId: string, options?: RequestOptions): Promise<WithResponse<WebhookSubscriptionWithSecret>> {
    return this.requester.send<WebhookSubscriptionWithSecret>(
      { method: 'POST', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}/rotate_secret` },
      options,
    );
  }

  /** Deliveries of a subscription, newest first, with the request sent and every attempt. */
  async deliveries(applicationId: string, webhookId: string, params: ListParams = {}, options?: RequestOptions): Promise<WithResponse<Page<WebhookDelivery>>> {
    return this.requester.send<Page<WebhookDelivery>>(
      { method: 'GET', path: route`/api/v1/applications/${applicationId}/webhooks/${webhookId}/deliveries`, query: { ...params } },
      options,
    );
  }

  /** One delivery by id. */
  async getDelivery(deliveryId: string, options?: RequestOptions): Promise<WithResponse<WebhookDelivery>> {
    return this.requester.send<WebhookDelivery>({ method: 'GET', path: route`/api/v1/webhook_deliveries/${deliveryId}` }, options);
  }

  /** Sends the delivery's event again: a new delivery with the same event id and body, signed afresh. */
  async replay(deliveryId: string, options?: RequestOptions): Promise<WithResponse<WebhookDelivery>> {
    return this.requester.send<WebhookDelivery>({ method: 'POST', path: route`/api/v1/webhook_deliveries/${deliveryId}/replay` }, options);
  }
}
