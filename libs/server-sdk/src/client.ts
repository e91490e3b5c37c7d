import { abortableSleep, ApiRequest, ApiRequester, defaultUserAgent, FetchFunction, QueryValue, RequestOptions, WithResponse } from './requester';
import { ConsentRecords, Imports } from './resources/consent-records';
import { Decisions, Sessions } from './resources/decisions';
import { Flows } from './resources/flows';
import { Receipts } from './resources/receipts';
import { WebhookSubscriptions } from './resources/webhook-subscriptions';
import { DEFAULT_BACKOFF } from './retry';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

export interface ServiceClientOptions {
  /** An API token (`Authorization: Bearer`). Server side only: never ship it to a browser. */
  apiKey: string;
  /** The gateway of the country you address, for example `https://us.decisions.example.com`. */
  baseUrl: string;
  /** Milliseconds per attempt before `ServiceTimeoutError`; default 60,000. */
  timeout?: number;
  /** Retries after a network error, a timeout, a 429 or a 5xx; default 2 (three attempts). */
  maxRetries?: number;
  /** Default: Node's global `fetch` (Node 18 or newer). */
  fetch?: FetchFunction;
  /** Wait before the first retry, in milliseconds, doubled for each further one (with jitter); default 500. */
  initialRetryDelay?: number;
  /** The longest backoff wait, in milliseconds; default 8,000. */
  maxRetryDelay?: number;
  /** The longest `Retry-After` the client waits for, in milliseconds; a longer one is raised at once. Default 60,000. */
  maxRetryAfter?: number;
  /** Added to the `User-Agent`, for example `acme-crm/3.1`. */
  appInfo?: string;
  /** How the client waits between retries; for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Source of the backoff jitter, in [0, 1); for tests. */
  random?: () => number;
}

/**
 * The server-to-server client:
 *
 * ```ts
 * const client = new ServiceClient({ apiKey: process.env.DCR_API_TOKEN!, baseUrl: 'https://us.decisions.example.com' });
 * const { consent_record } = await client.consentRecords.create({ flow_id, subject: { email }, decisions, captured_at });
 * ```
 *
 * Every method resolves with the API's JSON (snake_case, as documented) and `lastResponse`, and
 * rejects with a `ServiceError` subclass. Each country has its own endpoint: use one client per
 * country, and a `WrongCountryError` tells you which country holds a person or record.
 */
export class ServiceClient {
  readonly decisions: Decisions;
  /** Consent sessions: `decisions` of kind consent. */
  readonly sessions: Sessions;
  readonly flows: Flows;
  readonly consentRecords: ConsentRecords;
  readonly imports: Imports;
  readonly receipts: Receipts;
  readonly webhooks: WebhookSubscriptions;
  private readonly requester: ApiRequester;

  constructor(options: ServiceClientOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('new ServiceClient({ apiKey, baseUrl }) needs its options');
    const { apiKey, baseUrl } = options;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new TypeError('apiKey must be an API token');
    if (/^pk_(test|live)_/.test(apiKey)) {
      throw new TypeError('apiKey is a publishable key; the server library needs an API token (publishable keys belong in the browser client)');
    }
    if (typeof (globalThis as { document?: unknown }).document !== 'undefined') {
      throw new Error('ServiceClient runs on servers only: an API token must never reach a browser. Use the browser client with a publishable key.');
    }
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute URL, got ${JSON.stringify(baseUrl)}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('baseUrl must be an http(s) URL');
    const timeout = positive('timeout', options.timeout, DEFAULT_TIMEOUT_MS);
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('maxRetries must be an integer >= 0');
    const fetchFunction = options.fetch ?? (globalThis.fetch as unknown as FetchFunction | undefined);
    if (typeof fetchFunction !== 'function') throw new TypeError('No fetch: use Node 18 or newer, or pass options.fetch');

    this.requester = new ApiRequester({
      apiKey,
      baseUrl: url.toString().replace(/\/+$/, ''),
      timeout,
      maxRetries,
      fetch: fetchFunction,
      initialRetryDelayMs: positive('initialRetryDelay', options.initialRetryDelay, DEFAULT_BACKOFF.initialRetryDelayMs),
      maxRetryDelayMs: positive('maxRetryDelay', options.maxRetryDelay, DEFAULT_BACKOFF.maxRetryDelayMs),
      maxRetryAfterMs: positive('maxRetryAfter', options.maxRetryAfter, DEFAULT_BACKOFF.maxRetryAfterMs),
      sleep: options.sleep ?? abortableSleep,
      random: options.random ?? Math.random,
      userAgent: options.appInfo ? `${defaultUserAgent()} ${options.appInfo}` : defaultUserAgent(),
    });
    this.decisions = new Decisions(this.requester);
    this.sessions = new Sessions(this.decisions);
    this.flows = new Flows(this.requester);
    this.consentRecords = new ConsentRecords(this.requester);
    this.imports = new Imports(this.requester);
    this.receipts = new Receipts(this.requester);
    this.webhooks = new WebhookSubscriptions(this.requester);
  }

  /**
   * Any other API route, with the same authentication, retries, idempotency keys and errors:
   * `client.rawRequest('GET', '/api/v1/applications/tp_…/audit', { query: { limit: 10 } })`.
   */
  async rawRequest<T = unknown>(
    method: ApiRequest['method'],
    path: string,
    params: { query?: Record<string, QueryValue>; body?: unknown } = {},
    options?: RequestOptions,
  ): Promise<WithResponse<T>> {
    if (!path.startsWith('/')) throw new TypeError('path must start with /');
    return this.requester.send<T>({ method, path, query: params.query, body: params.body }, options);
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number of milliseconds`);
  return value;
}
