/*
 * The typed errors of the client scripts and the one HTTP helper they share. Error classes follow the
 * specification's mapping (and @dcr/server-sdk's names): the class says which family, `statusCode`
 * and `body` say exactly what the service answered.
 */

export interface ErrorDetail {
  field: string;
  reason: string;
}

export interface ErrorResponse {
  statusCode: number;
  /** The parsed JSON body; undefined when the body was not JSON. */
  body: unknown;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The base of every error the client raises. `statusCode` is undefined when no answer came back. */
export class ServiceError extends Error {
  readonly statusCode: number | undefined;
  readonly code: string;
  /** The problems a 400 or 422 names (`details` in the body); empty when there are none. */
  readonly details: ErrorDetail[];
  readonly requestId: string | undefined;
  /** The parsed error body as the service sent it. */
  readonly body: unknown;
  readonly headers: Record<string, string>;

  constructor(message: string, init: Partial<ErrorResponse> & { code?: string } = {}) {
    super(message);
    this.name = new.target.name;
    const body = isObject(init.body) ? init.body : {};
    this.statusCode = init.statusCode;
    this.code = init.code ?? (typeof body.code === 'string' ? body.code : 'unknown');
    this.details = Array.isArray(body.details)
      ? body.details.filter((d): d is ErrorDetail => isObject(d) && typeof d.field === 'string' && typeof d.reason === 'string')
      : [];
    this.headers = init.headers ?? {};
    this.requestId = typeof body.request_id === 'string' ? body.request_id : this.headers['x-request-id'];
    this.body = init.body;
  }
}

/** 400, 422 (see `details`) and any 4xx not named below. */
export class InvalidRequestError extends ServiceError {}
/** 401: the publishable key (or API key) is missing, unknown or revoked. */
export class AuthenticationError extends ServiceError {}
/** 403: the credential may not do this, or the page's origin is not an allowed origin. */
export class ForbiddenError extends ServiceError {}
/** 404: missing, or not visible to this credential. */
export class NotFoundError extends ServiceError {}
/** 409: the state does not allow this. */
export class ConflictError extends ServiceError {}
/** 410: spent or expired. */
export class GoneError extends ServiceError {}
/** 421: the resource lives in another country; `homeCountry` says which. */
export class WrongCountryError extends ServiceError {
  readonly homeCountry: string | undefined;
  constructor(message: string, init: Partial<ErrorResponse> & { code?: string } = {}) {
    super(message, init);
    const body = isObject(init.body) ? init.body : {};
    this.homeCountry = typeof body.home_country === 'string' ? body.home_country : undefined;
  }
}
/** 429: the application's rate limit (the client already waited `Retry-After` and retried). */
export class RateLimitError extends ServiceError {}
/** 5xx (501 included: the service does not offer this yet). */
export class APIError extends ServiceError {}
/** No answer: the service is unreachable, or the browser refused the request (CORS). */
export class ServiceConnectionError extends ServiceError {
  constructor(message: string, code = 'connection_error') {
    super(message, { code });
  }
}
/** No answer within `timeout` milliseconds. */
export class ServiceTimeoutError extends ServiceConnectionError {
  constructor(readonly timeoutMs: number) {
    super(`The service did not answer within ${timeoutMs} ms`, 'timeout');
  }
}
/** The client was used wrongly: a bad option (named in `option`), or an API key in a browser. */
export class ServiceConfigurationError extends ServiceError {
  constructor(
    message: string,
    readonly option?: string,
    code = 'invalid_option',
  ) {
    super(message, { code });
  }
}
/** A `service:error` message from the frame. */
export class ServiceFrameError extends ServiceError {
  constructor(
    message: string,
    code: string,
    readonly fatal: boolean,
    readonly recoverableVia: string | null,
  ) {
    super(message, { code });
  }
}

type ErrorClass = new (message: string, init: ErrorResponse & { code?: string }) => ServiceError;

/** The class for a status, as the specification maps them (plus 409, 410 and 421). */
export function errorClassForStatus(statusCode: number): ErrorClass {
  if (statusCode >= 500) return APIError;
  const classes: Record<number, ErrorClass> = {
    401: AuthenticationError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    421: WrongCountryError,
    429: RateLimitError,
  };
  return classes[statusCode] ?? InvalidRequestError;
}

/** The typed error for a non-2xx answer. */
export function errorFromResponse(response: ErrorResponse): ServiceError {
  const body = isObject(response.body) ? response.body : {};
  const message = typeof body.message === 'string' && body.message ? body.message : `The service answered HTTP ${response.statusCode}`;
  const code = typeof body.code === 'string' ? body.code : `http_${response.statusCode}`;
  const ErrorType = errorClassForStatus(response.statusCode);
  return new ErrorType(message, { ...response, code });
}

/** Milliseconds to wait from a `Retry-After` value (seconds or an HTTP date), when it says. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface RequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The whole budget, retries included. */
  timeoutMs: number;
  /** Retries after a 429 or a 5xx answer (not after 501), within the budget. */
  maxRetries?: number;
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One JSON request with a deadline: the parsed body of a 2xx answer, or a typed error. A POST carries
 * an `Idempotency-Key`, so a retry after a 429 or 5xx cannot act twice.
 */
export async function requestJson<T>(options: RequestOptions): Promise<T> {
  const doFetch = options.fetch ?? fetch;
  const deadline = Date.now() + options.timeoutMs;
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  if (options.method === 'POST') headers['Idempotency-Key'] = headers['Idempotency-Key'] ?? `sdk-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  for (let attempt = 0; ; attempt++) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new ServiceTimeoutError(options.timeoutMs);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), remaining);
    let status: number;
    let text: string;
    const responseHeaders: Record<string, string> = {};
    try {
      const response = await doFetch(options.url, { method: options.method, headers, body, signal: controller.signal, credentials: 'omit', cache: 'no-store' });
      response.headers.forEach((value, name) => (responseHeaders[name.toLowerCase()] = value));
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (controller.signal.aborted) throw new ServiceTimeoutError(options.timeoutMs);
      throw new ServiceConnectionError(`Could not reach the service at ${new URL(options.url).origin}: ${(error as Error)?.message ?? error}`);
    } finally {
      clearTimeout(timer);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (status >= 200 && status < 300) return parsed as T;
    const error = errorFromResponse({ statusCode: status, body: parsed, headers: responseHeaders });
    const retriable = status === 429 || (status >= 500 && status !== 501);
    if (!retriable || attempt >= (options.maxRetries ?? 2)) throw error;
    const wait = retryAfterMs(responseHeaders['retry-after']) ?? 250 * 2 ** attempt * (0.5 + Math.random() / 2);
    if (Date.now() + wait >= deadline) throw error;
    await sleep(wait);
  }
}
