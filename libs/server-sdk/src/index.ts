// The API client (server to server) and the webhook receiver. Both depend on nothing but Node.
export { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, ServiceClient } from './client';
export type { ServiceClientOptions } from './client';
export {
  APIError,
  AuthenticationError,
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  ServiceConnectionError,
  ServiceError,
  ServiceTimeoutError,
  WrongCountryError,
} from './errors';
export type { ErrorDetail, ServiceErrorCode } from './errors';
export type { FetchFunction, FetchRequestInit, FetchResponse, QueryValue, RequestOptions, ResponseInfo, WithResponse } from './requester';
export * from './resources/common';
export * from './resources/consent-records';
export * from './resources/decisions';
export * from './resources/flows';
export * from './resources/receipts';
export * from './resources/webhook-subscriptions';
export { SDK_VERSION } from './version';
export * from './webhooks';
