/**
 * Every error the service can answer with, by code. The HTTP status of each code is fixed here and
 * nowhere else: the gateway's exception filter and the RPC error codec both read this table, so a
 * domain error keeps its meaning whether it was raised in the gateway or three hops away over NATS.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  malformed_json: 400,
  unauthenticated: 401,
  credential_not_accepted: 401,
  forbidden: 403,
  origin_not_allowed: 403,
  not_found: 404,
  route_not_found: 404,
  request_timeout: 408,
  conflict: 409,
  illegal_transition: 409,
  idempotency_conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  wrong_country: 421,
  validation_failed: 422,
  rate_limited: 429,
  request_header_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
  upstream_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
