import { HttpException } from '@nestjs/common';
import { databaseConnectionLost, databaseConnectionRefused, DomainError, ErrorCode, FieldIssue, httpStatusOf, isLostDatabaseConnection, isRefusedDatabaseConnection } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { withoutBusSubject } from '@dcr/transport';

export interface ErrorBody {
  message: string;
  code: string;
  details?: FieldIssue[];
  request_id: string;
  [extra: string]: unknown;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
};

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'route_not_found',
  405: 'route_not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

function isFastifyError(value: unknown): boolean {
  const code = (value as { code?: unknown })?.code;
  return typeof code === 'string' && code in FASTIFY_CODES;
}

const GENERIC_MESSAGES: Partial<Record<ErrorCode, string>> = {
  malformed_json: 'The request body is not valid JSON',
  payload_too_large: 'The request body is larger than this route accepts (1 MiB; consent record imports 16 MiB; form-builder hooks 512 KiB)',
  unsupported_media_type: 'Send the request body as application/json',
};

/** A body that is not JSON: a 4xx about the body names it, as one about a field names the field. */
const malformedJson = () => new DomainError('malformed_json', GENERIC_MESSAGES.malformed_json!, [{ field: 'body', reason: 'is not valid JSON' }]);

/**
 * A JSON body holding a key that would replace an object's prototype (`__proto__`, a `constructor`
 * holding `prototype`): valid JSON, so not malformedJson, but refused before any route reads it,
 * each key named by its path (json-body.ts).
 */
export const prototypeKeysRefused = (issues: FieldIssue[]) =>
  new DomainError('invalid_request', 'The request body holds a prototype key (__proto__, or constructor holding prototype): such keys are not accepted', issues);

/** A JSON body that is not an object, where a route reads its fields: named like malformedJson. */
export const bodyNotAnObject = () => new DomainError('invalid_request', 'The request body must be a JSON object', [{ field: 'body', reason: 'must be a JSON object' }]);

/** Turns anything thrown while answering a request into the contract's error body, in one place. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  // The gateway's own database connection lost under the request: a retry may succeed (503, Retry-After: 1).
  if (isLostDatabaseConnection(error)) return databaseConnectionLost();
  // Or no connection to be had (PostgreSQL at max_connections, 53300; the pool's wait ran out): likewise.
  if (isRefusedDatabaseConnection(error)) return databaseConnectionRefused();
  // Nest wraps Fastify's own errors (body parsing, size limit) in an HttpException whose cause they are.
  const cause = (error as { cause?: unknown })?.cause;
  if (error instanceof HttpException && isFastifyError(cause)) return toDomainError(cause);
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = HTTP_STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
    if (code === 'route_not_found') return new DomainError(code, 'No such route');
    return new DomainError(code, status >= 500 ? 'Internal server error' : error.message);
  }
  const fastifyCode = (error as { code?: string })?.code;
  if (typeof fastifyCode === 'string' && FASTIFY_CODES[fastifyCode]) {
    const code = FASTIFY_CODES[fastifyCode];
    if (code === 'malformed_json') return malformedJson();
    return new DomainError(code, GENERIC_MESSAGES[code] ?? (error as Error).message);
  }
  const statusCode = (error as { statusCode?: number })?.statusCode;
  if (error instanceof SyntaxError && statusCode === 400) return malformedJson();
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new DomainError(HTTP_STATUS_CODES[statusCode] ?? 'invalid_request', (error as Error).message);
  }
  return new DomainError('internal_error', 'Internal server error');
}

/**
 * How much of a detail's field and reason an answer repeats: a field is named by what the caller
 * sent (an unknown key, say), and a key of 900 KB made a 900 KB error answer. A field's path may be
 * long by itself (the place where a body nests past 64 levels: about 600 characters of short keys).
 */
const DETAIL_FIELD_CHARS = 800;
const DETAIL_REASON_CHARS = 500;

/**
 * How many details an answer lists: a body of 12,000 unknown keys made 12,000 rows (about 600 KB of
 * answer). The rest are counted in `details_omitted`, and the message says how many there were.
 */
export const MAX_DETAILS = 100;

const clip = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit)}…` : text);

export function errorBody(error: DomainError, requestId: string): ErrorBody {
  const body: ErrorBody = { message: error.message, code: error.code, request_id: requestId };
  if (error.details && error.details.length > 0) {
    const omitted = Math.max(0, error.details.length - MAX_DETAILS);
    if (omitted > 0) body.message = `${error.message} (${error.details.length} problems; the first ${MAX_DETAILS} are listed)`;
    body.details = error.details.slice(0, MAX_DETAILS).map((issue) =>
      issue.field.length > DETAIL_FIELD_CHARS || issue.reason.length > DETAIL_REASON_CHARS
        ? { ...issue, field: clip(issue.field, DETAIL_FIELD_CHARS), reason: clip(issue.reason, DETAIL_REASON_CHARS) }
        : issue,
    );
    if (omitted > 0) body.details_omitted = omitted;
  }
  for (const [key, value] of Object.entries(error.extra ?? {})) {
    if (!(key in body)) body[key] = value;
  }
  return body;
}

/** The headers every error answer carries; answers are JSON. */
const ERROR_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The contract's answer to anything thrown while answering a request: its status, code, body and the
 * headers it adds (its content type, and on a 429 that has none yet `Retry-After`: the error's own
 * `retry_after` seconds when it says how long, else 1; a 503 only when its error names
 * `retry_after`, a wait known to end (a receipt on its way, a database connection lost); hence
 * `hasHeader`). One mapping for the Fastify path (sendError) and the direct lane. An unexpected
 * error (5xx) stays in the log, tied to the request id; the caller sees only the id. Only its type,
 * code, message and stack: a database error also carries the query's parameters and PostgreSQL's
 * detail, which may hold personal data.
 */
export function errorAnswer(
  error: unknown,
  requestId: string,
  logger: Logger,
  hasHeader: (name: string) => boolean,
): { status: number; code: ErrorCode; body: ErrorBody; headers: Array<[string, string]> } {
  const domainError = withoutBusSubject(toDomainError(error));
  const status = httpStatusOf(domainError.code);
  if (status >= 500) logger.error({ err: loggableError(error), request_id: requestId }, 'request failed');
  // A message the bus refused (413) names its subject only here, like the 5xx above.
  else if (error instanceof DomainError && domainError !== error) logger.warn({ err: loggableError(error), request_id: requestId }, 'request refused by the bus');
  const headers: Array<[string, string]> = [];
  const namesRetry = domainError.code === 'rate_limited' || (domainError.code === 'service_unavailable' && domainError.extra?.retry_after !== undefined);
  if (namesRetry && !hasHeader('retry-after')) headers.push(['retry-after', retryAfterOf(domainError)]);
  headers.push(['content-type', ERROR_CONTENT_TYPE]);
  return { status, code: domainError.code, body: errorBody(domainError, requestId), headers };
}

/** A 429's (or a 503's) `Retry-After`: the seconds the error names (`extra.retry_after`), else 1. */
export function retryAfterOf(error: { extra?: Record<string, unknown> }): string {
  const seconds = error.extra?.retry_after;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 1 ? String(Math.ceil(seconds)) : '1';
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const { status, body, headers } = errorAnswer(error, request.id, logger, (name) => reply.hasHeader(name));
  for (const [name, value] of headers) reply.header(name, value);
  void reply.status(status).send(body);
}

/** What of an unexpected error goes into the log: never its other properties (see sendError). */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { type: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}), stack: error.stack };
}
