import type { LoggerService } from '@nestjs/common';
import { databaseConnectionLost, databaseConnectionRefused, DomainError, ErrorCode, isErrorCode, isLostDatabaseConnection, isRefusedDatabaseConnection, SerializedDomainError } from '@dcr/domain';

/**
 * The error half of the wire format. Only DomainErrors cross a hop with their code, message, details
 * and extra; anything else becomes a generic internal_error so no message or stack of an unexpected
 * failure ever leaves the process that had it (it is logged there instead).
 */
const INTERNAL_MESSAGE = 'The service failed to process the message';

export const internalError = () => new DomainError('internal_error', INTERNAL_MESSAGE);

/** A message over the bus's largest (NATS's `max_payload`), refused before it is sent. */
export const payloadTooLarge = (subject: string) => new DomainError('payload_too_large', `The message for ${subject} is larger than the bus accepts`);

/**
 * Nothing listens (a service restarting, or down): a wait that usually ends within seconds, so the
 * caller is told to retry after one (`Retry-After: 1` at the edge).
 */
export const noResponder = (subject: string) =>
  new DomainError('service_unavailable', `No service is listening on ${subject}`, undefined, { retry_after: 1 });

/** The bus itself is not reachable (a NATS connection lost and reconnecting): answered at once, not after a timeout. */
export const busUnreachable = (subject: string) =>
  new DomainError('service_unavailable', `The message bus is not reachable for ${subject}; reconnecting`, undefined, { retry_after: 1 });

export const timedOut = (subject: string, timeoutMs: number) =>
  new DomainError('upstream_timeout', `No reply on ${subject} within ${timeoutMs} ms`);

export const clientClosed = (subject: string) =>
  new DomainError('service_unavailable', `The client was closed before a reply on ${subject} arrived`);

/**
 * The transport's own failures (above) name the bus subject, which is for the log: what a caller of
 * the public API is told instead, by code. Recognised by their words, as they cross hops as any
 * DomainError does (a service behind the gateway that met one answers it over the bus).
 */
const TRANSPORT_FAILURE = /^(?:No service is listening on |No reply on |The client was closed before a reply on |The message for )\S+/;
const CALLER_MESSAGES: Partial<Record<ErrorCode, string>> = {
  service_unavailable: 'A service needed to answer this request is not available; try again shortly',
  upstream_timeout: 'A service needed to answer this request did not answer in time; the request may still have taken effect',
  payload_too_large: 'The request is too large to pass on to the service that handles it; send a smaller body',
};

/** A transport failure in the words a caller gets (no subject); any other error as it is. */
export function withoutBusSubject(error: DomainError): DomainError {
  const message = CALLER_MESSAGES[error.code];
  if (message === undefined || !TRANSPORT_FAILURE.test(error.message)) return error;
  return new DomainError(error.code, message, error.details, error.extra);
}

/** A plain object already in the serialised shape (e.g. what the RPC exception filter emits). */
export function isSerializedDomainError(value: unknown): value is SerializedDomainError {
  if (typeof value !== 'object' || value === null || value instanceof Error) return false;
  const candidate = value as Record<string, unknown>;
  return (
    isErrorCode(candidate.code) &&
    typeof candidate.message === 'string' &&
    (candidate.details === undefined || Array.isArray(candidate.details)) &&
    (candidate.extra === undefined || (typeof candidate.extra === 'object' && candidate.extra !== null))
  );
}

/** Copies only the known fields, so nothing else a handler attached can ride along. */
function pick(error: SerializedDomainError): SerializedDomainError {
  const { code, message, details, extra } = error;
  return { code, message, ...(details !== undefined && { details }), ...(extra !== undefined && { extra }) };
}

/**
 * What goes on the wire for whatever a handler threw. Unexpected errors are logged, never sent; a lost
 * database connection, or none to be had (PostgreSQL refused one, or the pool had none free in time), crosses as
 * service_unavailable (retry_after 1), as a retry can succeed.
 */
export function toSerializedError(error: unknown, logger?: LoggerService): SerializedDomainError {
  if (error instanceof DomainError) return pick(error.toJSON());
  if (isSerializedDomainError(error)) return pick(error);
  // Nest's RpcException wraps a payload; accept it only when that payload is already one of ours.
  const wrapped = (error as { getError?: () => unknown } | null)?.getError?.();
  if (isSerializedDomainError(wrapped)) return pick(wrapped);
  // A lost database connection is no fault of the request: the caller may retry (503, Retry-After).
  if (isLostDatabaseConnection(error)) {
    logger?.warn(`Database connection lost while handling a message: ${(error as Error).message}`);
    return databaseConnectionLost().toJSON();
  }
  // No connection to be had (PostgreSQL at max_connections, 53300; the pool's wait ran out): likewise.
  if (isRefusedDatabaseConnection(error)) {
    logger?.warn(`No database connection for a message: ${(error as Error).message}`);
    return databaseConnectionRefused().toJSON();
  }
  logger?.error(
    `Unexpected error while handling a message: ${error instanceof Error ? error.message : safeStringify(error)}`,
    error instanceof Error ? error.stack : undefined,
  );
  return internalError().toJSON();
}

/** The typed error a caller sees for a reply `{ err }`. */
export function fromSerializedError(value: unknown): DomainError {
  return isSerializedDomainError(value) ? DomainError.fromJSON(pick(value)) : internalError();
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
