import { validationFailed } from '../errors';
import type { DecisionEventType } from '../decisions';

/**
 * Event types a subscription may ask for. The specification names these and says the list may
 * grow; `consent.modified` and `approval.approved` are accepted as reserved names (the audit trail
 * uses them) although no webhook carries them today. Every type eventTypeFor can produce is here
 * (checked below at compile time).
 */
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

// Fails to compile when eventTypeFor learns an event type this list does not have.
const EVERY_DECISION_EVENT_IS_A_WEBHOOK_EVENT: [DecisionEventType] extends [WebhookEventType] ? true : never = true;
void EVERY_DECISION_EVENT_IS_A_WEBHOOK_EVENT;

/** Sent by the test panel through the same signed pipeline; never subscribable, never counted. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

export function isWebhookEventType(type: string): type is WebhookEventType {
  return typeof type === 'string' && EVENT_TYPE_SET.has(type);
}

/**
 * The `events` of a subscription request: a non-empty array of known event types, returned without
 * duplicates in the order given. Refusals are `validation_failed` naming `events` or `events[i]`.
 */
export function validateWebhookEvents(events: unknown): WebhookEventType[] {
  if (!Array.isArray(events)) throw refuseEvents('events', 'must be an array of event types');
  if (events.length === 0) throw refuseEvents('events', 'must name at least one event type');
  const issues = events.flatMap((type, i) =>
    isWebhookEventType(type)
      ? []
      : [{ field: `events[${i}]`, reason: `${JSON.stringify(type)} is not an event type; use one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }],
  );
  if (issues.length > 0) throw validationFailed(issues, 'The webhook event types are not valid');
  return [...new Set(events as WebhookEventType[])];
}

const refuseEvents = (field: string, reason: string) =>
  validationFailed([{ field, reason }], 'The webhook event types are not valid');

/**
 * The delivery body, serialised once: these exact bytes are signed, stored with the delivery and sent
 * on every retry and replay, so a receiver's signature check never depends on how anyone re-encodes
 * JSON. Keys in the order `event`, `id`, `created_at`, `application_id`, `data`.
 */
export function webhookBody(input: {
  event: string;
  id: string;
  createdAt: string;
  applicationId: string;
  data: Record<string, unknown>;
}): string {
  for (const key of ['event', 'id', 'createdAt', 'applicationId'] as const) {
    // JSON.stringify would silently drop an undefined field from a body that is then signed forever.
    if (typeof input[key] !== 'string' || input[key].length === 0) throw new TypeError(`webhook ${key} must be a non-empty string`);
  }
  if (input.data === null || typeof input.data !== 'object' || Array.isArray(input.data)) {
    throw new TypeError('webhook data must be a JSON object');
  }
  return JSON.stringify({
    event: input.event,
    id: input.id,
    created_at: input.createdAt,
    application_id: input.applicationId,
    data: input.data,
  });
}
