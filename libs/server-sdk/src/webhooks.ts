import { createHmac, timingSafeEqual } from 'node:crypto';

// This file must stay dependency-free (node:crypto only): receivers install this package alone, so it
// re-implements the service's signing rule instead of importing it from the service's own libraries.

/** How far `X-Service-Timestamp` may be from the receiver's clock, either way (specification: 5 minutes). */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export const WEBHOOK_SIGNATURE_HEADER = 'x-service-signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'x-service-timestamp';
export const WEBHOOK_EVENT_ID_HEADER = 'x-service-event-id';
export const WEBHOOK_EVENT_TYPE_HEADER = 'x-service-event-type';

/** Event type of the deliveries sent from the webhook test panel. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** Why a delivery was refused; answer every one of them with 400 and do nothing else. */
export type WebhookVerificationFailure =
  | 'missing_header'
  | 'bad_signature_format'
  | 'signature_mismatch'
  | 'timestamp_out_of_tolerance'
  | 'malformed_payload';

/**
 * Thrown by verifyWebhook. Carries `statusCode` 400, so Express's and Fastify's default error
 * handlers already answer a refused delivery with 400 rather than 500.
 */
export class WebhookVerificationError extends Error {
  readonly statusCode = 400;

  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifiedWebhook<T = unknown> {
  /** Event id from the signed body: the idempotency key, the same on every retry. */
  id: string;
  /** Event type, for example `consent.granted` (`webhook.test` for test deliveries). */
  event: string;
  createdAt: string;
  applicationId: string;
  data: T;
  /** The signed `X-Service-Timestamp` of this attempt, in Unix seconds. */
  timestamp: number;
}

/** A WHATWG `Headers` (fetch, undici, Next.js route handlers) or anything with the same `get`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/** Node's `IncomingHttpHeaders` (Express, Fastify, http) or any object of header values. */
export type HeaderRecord = Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The subscription's signing secret (`whsec_…`). During a rotation pass both, newest first. */
  secret: string | readonly string[];
  headers: HeaderRecord | HeadersLike;
  /** The exact request body bytes, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The receiver's clock in Unix seconds; defaults to now. */
  now?: number;
}

const TIMESTAMP = /^\d{1,15}$/;
const V1_SIGNATURE = /^v1=([0-9a-fA-F]{64})$/;

/**
 * Verifies one delivery and returns its event. In order: both headers present; the signature
 * `v1=<hex HMAC-SHA256 over "<timestamp>.<raw body>">` matches (keyed with the secret's UTF-8 bytes,
 * compared in constant time; the header may carry several values separated by commas or spaces and
 * one matching `v1` value is enough, others such as future versions are ignored); the timestamp is
 * within `toleranceSeconds` of `now`, which stops a captured delivery being replayed later; the body
 * is a JSON event.
 *
 * Only the signed body is trusted: `id` and `event` come from it, not from the unsigned
 * `X-Service-Event-ID` / `X-Service-Event-Type` headers.
 */
export function verifyWebhook<T = unknown>(input: VerifyWebhookInput): VerifiedWebhook<T> {
  const secrets = secretsOf(input.secret);
  const body = bodyBytes(input.rawBody);
  const tolerance = input.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) throw new RangeError('toleranceSeconds must be a number >= 0');

  const signatureHeader = readHeader(input.headers, WEBHOOK_SIGNATURE_HEADER);
  const timestampHeader = readHeader(input.headers, WEBHOOK_TIMESTAMP_HEADER);
  if (signatureHeader === undefined || signatureHeader.trim() === '') {
    throw new WebhookVerificationError('missing_header', 'The X-Service-Signature header is missing');
  }
  if (timestampHeader === undefined || timestampHeader.trim() === '') {
    throw new WebhookVerificationError('missing_header', 'The X-Service-Timestamp header is missing');
  }

  const timestampText = timestampHeader.trim();
  if (!TIMESTAMP.test(timestampText)) {
    throw new WebhookVerificationError('bad_signature_format', 'The X-Service-Timestamp header is not Unix seconds');
  }
  const candidates = signatureHeader
    .split(/[\s,]+/)
    .map((value) => V1_SIGNATURE.exec(value)?.[1])
    .filter((hex): hex is string => hex !== undefined)
    .map((hex) => Buffer.from(hex, 'hex'));
  if (candidates.length === 0) {
    throw new WebhookVerificationError('bad_signature_format', 'The X-Service-Signature header has no v1=<hex> value');
  }

  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestampText}.`, 'utf8').update(body).digest();
    // No early exit: the time taken does not depend on which candidate, if any, matched.
    for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError('signature_mismatch', 'The signature does not match this body and secret');
  }

  const timestamp = Number(timestampText);
  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (!(Math.abs(now - timestamp) <= tolerance)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The timestamp is ${now - timestamp} s from this server's clock; at most ${tolerance} s is accepted`,
    );
  }

  return { ...parseEvent<T>(body), timestamp };
}

function secretsOf(secret: string | readonly string[]): readonly string[] {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0 || !secrets.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new TypeError('secret must be a non-empty string (or a non-empty array of them)');
  }
  return secrets;
}

function bodyBytes(rawBody: string | Uint8Array): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  // The commonest integration mistake: a body already parsed by a JSON middleware cannot be verified.
  throw new TypeError(
    'rawBody must be the exact request bytes (a string or a Buffer), not a parsed object; read the body raw (see the README)',
  );
}

function readHeader(headers: HeaderRecord | HeadersLike, name: string): string | undefined {
  if (typeof (headers as HeadersLike).get === 'function') return (headers as HeadersLike).get(name) ?? undefined;
  // Node lower-cases incoming names, but a hand-built object may not: match names case-insensitively
  // and join repeated values the way HTTP does.
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as HeaderRecord)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values.length === 0 ? undefined : values.join(', ');
}

function parseEvent<T>(body: Buffer): Omit<VerifiedWebhook<T>, 'timestamp'> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed_payload', 'The body is not JSON');
  }
  const event = parsed as Record<string, unknown> | null;
  if (
    event === null ||
    typeof event !== 'object' ||
    Array.isArray(event) ||
    typeof event.event !== 'string' ||
    typeof event.id !== 'string' ||
    typeof event.created_at !== 'string' ||
    typeof event.application_id !== 'string' ||
    !('data' in event)
  ) {
    throw new WebhookVerificationError(
      'malformed_payload',
      'The body is not a webhook event with event, id, created_at, application_id and data',
    );
  }
  return {
    id: event.id,
    event: event.event,
    createdAt: event.created_at,
    applicationId: event.application_id,
    data: event.data as T,
  };
}

/** Where a WebhookDeduplicator remembers processed event ids; share one between instances of a receiver. */
export interface WebhookIdStore {
  has(id: string): Promise<boolean>;
  /** `ttlMs` is how long the id must be remembered (for example Redis `SET id 1 PX ttlMs`). */
  add(id: string, ttlMs: number): Promise<void>;
}

export interface WebhookDeduplicatorOptions {
  /** How long a processed id is remembered; default 24 hours, longer than the whole retry schedule. */
  ttlMs?: number;
  /** Default: in this process's memory, which is lost on restart and not shared between instances. */
  store?: WebhookIdStore;
  /** Milliseconds clock for the in-memory store; for tests. */
  now?: () => number;
}

export const DEFAULT_DEDUPLICATION_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Runs a handler at most once per event id. The service delivers at least once: a retry after a lost
 * answer, a replay from the debugger, or two attempts racing carry the same event id. An id is
 * remembered only after its handler succeeded, so a handler that throws leaves the event to the
 * service's next retry. Concurrent calls with the same id in this process wait for the first one
 * (and run their own handler only if it failed); across processes, a shared store narrows but
 * cannot close the race, so handlers should still be idempotent where it matters.
 */
export class WebhookDeduplicator {
  private readonly ttlMs: number;
  private readonly store: WebhookIdStore;
  /** Settles with true once the id is processed, false when the attempt failed. */
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(options: WebhookDeduplicatorOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_DEDUPLICATION_TTL_MS;
    if (!Number.isFinite(this.ttlMs) || this.ttlMs <= 0) throw new RangeError('ttlMs must be a positive number');
    this.store = options.store ?? new MemoryWebhookIdStore(options.now ?? Date.now);
  }

  async process<T>(event: { id: string }, handler: () => Promise<T>): Promise<{ duplicate: boolean; result?: T }> {
    const id = event?.id;
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('event.id must be a non-empty string');
    for (let running = this.inFlight.get(id); running; running = this.inFlight.get(id)) {
      if (await running) return { duplicate: true };
    }
    return this.runFirst(id, handler);
  }

  private async runFirst<T>(id: string, handler: () => Promise<T>): Promise<{ duplicate: boolean; result?: T }> {
    let settle!: (processed: boolean) => void;
    // Registered before the first await, so a concurrent call for the same id always sees it.
    this.inFlight.set(id, new Promise<boolean>((resolve) => (settle = resolve)));
    let processed = false;
    try {
      if (await this.store.has(id)) {
        processed = true;
        return { duplicate: true };
      }
      const result = await handler();
      await this.store.add(id, this.ttlMs);
      processed = true;
      return { duplicate: false, result };
    } finally {
      // Removed before waiters wake, so the first of them to retry registers itself cleanly.
      this.inFlight.delete(id);
      settle(processed);
    }
  }
}

/**
 * Ids with an expiry, in insertion order. The TTL is the same for every id, so the oldest entries
 * expire first and pruning only ever looks at the front of the map.
 */
class MemoryWebhookIdStore implements WebhookIdStore {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  async has(id: string): Promise<boolean> {
    const expiry = this.expiries.get(id);
    if (expiry === undefined) return false;
    if (expiry > this.now()) return true;
    this.expiries.delete(id);
    return false;
  }

  async add(id: string, ttlMs: number): Promise<void> {
    this.prune();
    this.expiries.delete(id); // re-insert at the back so insertion order stays expiry order
    this.expiries.set(id, this.now() + ttlMs);
  }

  private prune(): void {
    const now = this.now();
    for (const [id, expiry] of this.expiries) {
      if (expiry > now) break;
      this.expiries.delete(id);
    }
  }
}
