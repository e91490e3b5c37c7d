import { randomUUID } from 'node:crypto';
import { errorFromResponse, ServiceConnectionError, ServiceError, ServiceTimeoutError } from './errors';
import { BackoffOptions, isRetryable, retryDelay, RetryPolicy } from './retry';
import { SDK_VERSION } from './version';

/** What the client needs of `fetch`: Node's global one fits, and so does undici's or a test double. */
export type FetchFunction = (url: string, init: FetchRequestInit) => Promise<FetchResponse>;

export interface FetchRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null; forEach(callback: (value: string, name: string) => void): void };
  text(): Promise<string>;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a POST. The client makes one for every POST and reuses it for each
   * retry of that call; pass your own (1 to 255 visible ASCII characters) to make a call safe to
   * repeat across processes, for example after a crash. The service keeps answers for 24 hours.
   */
  idempotencyKey?: string | undefined;
  /** Milliseconds per attempt; overrides the client's `timeout`. */
  timeout?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal | undefined;
  /** Extra request headers, for example your own `X-Request-Id` (8 to 128 characters of `[A-Za-z0-9._:-]`). */
  headers?: Record<string, string> | undefined;
}

/** About the answer a result came from: `result.lastResponse`. */
export interface ResponseInfo {
  statusCode: number;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
  requestId: string | undefined;
  /** The `Idempotency-Key` sent (POSTs). */
  idempotencyKey: string | undefined;
  /** True when the service answered from its idempotency store: an earlier attempt or call with this key had succeeded. */
  idempotentReplayed: boolean;
  /** Attempts made, 1 when the first one succeeded. */
  attempts: number;
}

/** A result with the details of its answer on the non-enumerable `lastResponse`. */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };

export type QueryValue = string | number | boolean | undefined | { [key: string]: string | number | boolean | undefined };

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Already encoded (see `route`). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Default `idempotent`. */
  retry?: RetryPolicy;
}

export interface RequesterSettings extends BackoffOptions {
  apiKey: string;
  baseUrl: string;
  timeout: number;
  maxRetries: number;
  fetch: FetchFunction;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  userAgent: string;
}

/** One attempt's answer, before the call adds what it knows (the key, the attempt count). */
interface AttemptResult {
  info: Omit<ResponseInfo, 'idempotencyKey' | 'attempts'>;
  value: unknown;
}

/**
 * Sends one API call: authentication, JSON in and out, a timeout per attempt, retries with
 * exponential backoff and jitter (honouring `Retry-After`), the same idempotency key on every
 * attempt of a POST, and the error class for each status.
 */
export class ApiRequester {
  constructor(private readonly settings: RequesterSettings) {}

  async send<T>(request: ApiRequest, options: RequestOptions = {}): Promise<WithResponse<T>> {
    const maxRetries = options.maxRetries ?? this.settings.maxRetries;
    const timeout = options.timeout ?? this.settings.timeout;
    const idempotencyKey = request.method === 'POST' ? options.idempotencyKey ?? randomUUID() : undefined;
    const url = this.url(request);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.settings.userAgent,
      ...lowerCaseKeys(options.headers ?? {}),
      authorization: `Bearer ${this.settings.apiKey}`,
    };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }

    for (let attempt = 1; ; attempt++) {
      throwIfAborted(options.signal);
      let outcome: AttemptResult;
      try {
        outcome = await this.attempt(url, { method: request.method, headers, body }, timeout, options.signal);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const retry = attempt - 1;
        if (retry >= maxRetries || !isRetryable(error, request.retry ?? 'idempotent')) throw error;
        const wait = retryDelay(retry, error, this.settings, this.settings.random);
        if (wait === undefined) throw error;
        await this.settings.sleep(wait, options.signal);
        continue;
      }
      const info: ResponseInfo = { ...outcome.info, idempotencyKey, attempts: attempt };
      return withResponse(outcome.value, info) as WithResponse<T>;
    }
  }

  private async attempt(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
    timeout: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onCallerAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      let status: number;
      let headers: Record<string, string>;
      let text: string;
      try {
        const response = await this.settings.fetch(url, { ...init, signal: controller.signal });
        status = response.status;
        headers = headersOf(response);
        // Inside the try: the timeout also covers reading the body.
        text = await response.text();
      } catch (error) {
        if (callerSignal?.aborted) throw callerSignal.reason ?? error;
        if (timedOut) throw new ServiceTimeoutError(timeout);
        throw new ServiceConnectionError(`Could not reach the service at ${new URL(url).origin}: ${(error as Error)?.message ?? error}`, { cause: error });
      }
      const parsed = parseJson(text);
      if (status < 200 || status > 299) throw errorFromResponse({ statusCode: status, body: parsed.ok ? parsed.value : undefined, rawBody: text, headers });
      if (!parsed.ok) {
        throw errorFromResponse({
          statusCode: status,
          body: { message: `The service answered HTTP ${status} with a body that is not JSON`, code: 'invalid_response' },
          rawBody: text,
          headers,
        });
      }
      return {
        info: {
          statusCode: status,
          headers,
          requestId: headers['x-request-id'],
          idempotentReplayed: headers['idempotent-replayed'] === 'true',
        },
        value: parsed.value,
      };
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private url(request: ApiRequest): string {
    const url = new URL(this.settings.baseUrl.replace(/\/+$/, '') + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value === undefined) continue;
      if (typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) if (inner !== undefined) url.searchParams.append(`${name}[${key}]`, String(inner));
      } else {
        url.searchParams.append(name, String(value));
      }
    }
    return url.toString();
  }
}

/**
 * A path with its parameters percent-encoded: route`/api/v1/flows/${flowId}`. Refuses an empty or
 * missing parameter, which would otherwise address another route.
 */
export function route(strings: TemplateStringsArray, ...values: unknown[]): string {
  let path = strings[0];
  values.forEach((value, i) => {
    if (typeof value !== 'string' || value.length === 0) {
      throw new TypeError(`${strings[0]}…: path parameter ${i + 1} must be a non-empty string, got ${value === '' ? 'an empty string' : typeof value}`);
    }
    path += encodeURIComponent(value) + strings[i + 1];
  });
  return path;
}

export function defaultUserAgent(): string {
  return `dcr-server-sdk/${SDK_VERSION} node/${process.versions.node}`;
}

/** A wait that ends early, with the abort reason, when the signal fires. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function withResponse(value: unknown, info: ResponseInfo): unknown {
  // A 204 has no body: the info alone stands for the result.
  const target = value !== null && typeof value === 'object' ? value : {};
  Object.defineProperty(target, 'lastResponse', { value: info, enumerable: false, writable: false, configurable: true });
  return value === undefined ? target : value;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function headersOf(response: FetchResponse): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
  return headers;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}
