// Errors the API client raises. Every error body of the service is
// `{"message", "code", "details"?, "request_id"}` (a 421 adds `home_country`); the class is chosen by
// the HTTP status, as the specification maps it, and the code says exactly what went wrong.

/** The service's error codes (docs/api.md); an unknown code from a newer service is kept as it is. */
export type ServiceErrorCode =
  | 'invalid_request'
  | 'malformed_json'
  | 'unauthenticated'
  | 'credential_not_accepted'
  | 'forbidden'
  | 'origin_not_allowed'
  | 'not_found'
  | 'route_not_found'
  | 'conflict'
  | 'illegal_transition'
  | 'idempotency_conflict'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'wrong_country'
  | 'validation_failed'
  | 'rate_limited'
  | 'internal_error'
  | 'not_implemented'
  | 'service_unavailable'
  | 'upstream_timeout'
  // Raised by this library when no answer came back.
  | 'connection_error'
  | 'timeout'
  | (string & {});

/** One problem with the request, for example `{field: "decisions.marketing", reason: "default_checked consent purpose"}`. */
export interface ErrorDetail {
  field: string;
  reason: string;
}

/** What the service answered, kept on every error raised from an answer. */
export interface ErrorResponseInit {
  statusCode: number;
  /** The parsed JSON body, or undefined when the body was not JSON. */
  body: unknown;
  /** The body as received. */
  rawBody: string;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
}

export type ServiceErrorInit = Partial<ErrorResponseInit> & { code?: string };

/**
 * The base of every error this client raises. Catch it to handle them all; catch a subclass for one
 * family. `statusCode` is undefined when no answer came back (a network error or a timeout).
 */
export class ServiceError extends Error {
  readonly statusCode: number | undefined;
  readonly code: ServiceErrorCode;
  /** The problems named by a 400 or 422 (under `details` in the body); empty when there are none. */
  readonly details: ErrorDetail[];
  /** The service's `request_id` (body, or the `X-Request-Id` header): quote it when you ask for help. */
  readonly requestId: string | undefined;
  /** The parsed JSON error body as the service sent it (fields beyond these, such as `allowed` on a 409, are here). */
  readonly body: unknown;
  readonly rawBody: string | undefined;
  readonly headers: Record<string, string>;

  constructor(message: string, init: ServiceErrorInit = {}) {
    super(message);
    this.name = new.target.name;
    const body = isObject(init.body) ? init.body : {};
    this.statusCode = init.statusCode;
    this.code = init.code ?? (typeof body.code === 'string' ? body.code : 'unknown');
    this.details = Array.isArray(body.details) ? body.details.filter(isDetail) : [];
    this.headers = init.headers ?? {};
    this.requestId = typeof body.request_id === 'string' ? body.request_id : this.headers['x-request-id'];
    this.body = init.body;
    this.rawBody = init.rawBody;
  }
}

/** 400 (bad parameters, a body that is not JSON), 422 (validation: see `details`), and any other 4xx not named below. */
export class InvalidRequestError extends ServiceError {}

/** 401: the API token is missing, unknown or revoked, or the credential kind is not accepted. */
export class AuthenticationError extends ServiceError {}

/** 403: authenticated, but the token lacks the scope (named in the message) or may not do this. */
export class ForbiddenError extends ServiceError {}

/** 404: missing, or not visible to this token (another account's resources answer exactly like missing ones). */
export class NotFoundError extends ServiceError {}

/**
 * 409: the resource's state does not allow this (`conflict`, `illegal_transition`), or an idempotency
 * key was reused with another request or while its first request was still running
 * (`idempotency_conflict`).
 */
export class ConflictError extends ServiceError {}

/** 410: spent or expired, for example an exchange token already used, or a capture older than 24 hours. */
export class GoneError extends ServiceError {}

/**
 * 421: the resource or person lives in another country. Call that country's endpoint instead;
 * the service says which, and nothing else about the resource.
 */
export class WrongCountryError extends ServiceError {
  /** ISO country code of the home country, for example `DE`. */
  readonly homeCountry: string | undefined;

  constructor(message: string, init: ServiceErrorInit = {}) {
    super(message, init);
    const body = isObject(init.body) ? init.body : {};
    this.homeCountry = typeof body.home_country === 'string' ? body.home_country : undefined;
  }
}

/** 429: the application's rate limit. The client already waited `Retry-After` and retried, up to `maxRetries`. */
export class RateLimitError extends ServiceError {
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;

  constructor(message: string, init: ServiceErrorInit = {}) {
    super(message, init);
    const wait = parseRetryAfter(this.headers['retry-after']);
    this.retryAfter = wait === undefined ? undefined : wait / 1000;
  }
}

/** 5xx: the service failed. The client already retried, up to `maxRetries`. Also a 2xx whose body is not JSON. */
export class APIError extends ServiceError {}

/** No answer: the connection failed or broke. Safe to retry a POST with the same `idempotencyKey`. */
export class ServiceConnectionError extends ServiceError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'connection_error' });
    if (options.cause !== undefined) Object.defineProperty(this, 'cause', { value: options.cause, enumerable: false, configurable: true, writable: true });
  }
}

/** No answer within `timeout` milliseconds. */
export class ServiceTimeoutError extends ServiceConnectionError {
  constructor(readonly timeoutMs: number) {
    super(`No answer within ${timeoutMs} ms`, { code: 'timeout' });
  }
}

type ServiceErrorClass = new (message: string, init: ServiceErrorInit) => ServiceError;

/** The class for a status, as the specification maps them (plus 409, 410 and 421, which it leaves open). */
export function errorClassForStatus(statusCode: number): ServiceErrorClass {
  switch (statusCode) {
    case 400:
    case 422:
      return InvalidRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return ForbiddenError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 410:
      return GoneError;
    case 421:
      return WrongCountryError;
    case 429:
      return RateLimitError;
    default:
      // Any other 4xx is a request to change; anything else unexpected (a 5xx, an unreadable 2xx) is the service's.
      return statusCode >= 400 && statusCode < 500 ? InvalidRequestError : APIError;
  }
}

/** The error for a non-2xx answer. */
export function errorFromResponse(init: ErrorResponseInit): ServiceError {
  const body = isObject(init.body) ? init.body : undefined;
  const message = typeof body?.message === 'string' && body.message ? body.message : `The service answered HTTP ${init.statusCode}`;
  const code = typeof body?.code === 'string' ? body.code : defaultCode(init.statusCode);
  const ErrorClass = errorClassForStatus(init.statusCode);
  return new ErrorClass(message, { ...init, code });
}

/** The code of an answer that named none (a proxy's error page, for example). */
function defaultCode(statusCode: number): string {
  return statusCode === 429 ? 'rate_limited' : `http_${statusCode}`;
}

/**
 * `Retry-After` in milliseconds: delta-seconds (`"2"`) or an HTTP date (RFC 9110, section 10.2.3),
 * never negative; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined | null, now: number = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDetail(value: unknown): value is ErrorDetail {
  return isObject(value) && typeof value.field === 'string' && typeof value.reason === 'string';
}
