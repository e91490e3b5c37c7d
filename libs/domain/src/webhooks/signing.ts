import { createHmac } from 'node:crypto';

/** The scheme prefix of every signature value; a new scheme would get a new version, sent beside v1. */
export const SIGNATURE_VERSION = 'v1';

export const WEBHOOK_USER_AGENT = 'DecisionService-Webhooks/1';

/** Header names as the specification spells them (HTTP treats them case-insensitively). */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Service-Signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'X-Service-Timestamp';
export const WEBHOOK_EVENT_ID_HEADER = 'X-Service-Event-ID';
export const WEBHOOK_EVENT_TYPE_HEADER = 'X-Service-Event-Type';

/**
 * `v1=<hex HMAC-SHA256 over "<timestamp>.<raw body>">`, key = the secret string's UTF-8 bytes.
 * The timestamp is inside the MAC so a captured delivery cannot be replayed later under a fresh
 * timestamp; the body is signed as the exact bytes sent, never a re-serialisation.
 */
export function webhookSignature(secret: string, timestamp: number, rawBody: string | Buffer): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new RangeError('webhook secret must be a non-empty string');
  assertTimestamp(timestamp);
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') mac.update(rawBody, 'utf8');
  else mac.update(rawBody);
  return `${SIGNATURE_VERSION}=${mac.digest('hex')}`;
}

/**
 * Every header of one delivery attempt. The timestamp is the attempt's own (each retry is signed
 * again at send time), while the event id stays the same across retries: it is the receiver's
 * idempotency key. After a rotation the signature header holds two values, `v1=<new>,v1=<old>`.
 */
export function webhookHeaders(input: {
  secret: string;
  /** The secret before a rotation, while it still signs: its value follows the new one's, after a comma. */
  previousSecret?: string;
  timestamp: number;
  eventId: string;
  eventType: string;
  rawBody: string;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [WEBHOOK_SIGNATURE_HEADER]: [input.secret, ...(input.previousSecret ? [input.previousSecret] : [])].map((secret) => webhookSignature(secret, input.timestamp, input.rawBody)).join(','),
    [WEBHOOK_TIMESTAMP_HEADER]: String(input.timestamp),
    [WEBHOOK_EVENT_ID_HEADER]: input.eventId,
    [WEBHOOK_EVENT_TYPE_HEADER]: input.eventType,
  };
}

/** Unix seconds of `date`, the unit of `X-Service-Timestamp`. */
export function webhookTimestamp(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

// Whole non-negative seconds only: `1.5` or `1e21` would print differently from what a receiver
// parses, and the MAC covers the printed text.
function assertTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`webhook timestamp must be whole Unix seconds, got ${String(timestamp)}`);
  }
}
