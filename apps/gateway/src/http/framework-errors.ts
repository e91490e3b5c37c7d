import { Socket } from 'node:net';
import { DomainError, newRequestId } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'pino';
import { errorBody, sendError } from './error-responder';

/**
 * What Fastify refuses before a route runs (a malformed percent-encoding in the path, a path
 * parameter over its length limit), answered in the error contract with the request id, instead of
 * Fastify's own body (`frameworkErrors`).
 */
export function frameworkErrorHandler(logger: Logger) {
  return (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    const refusal =
      error.code === 'FST_ERR_BAD_URL'
        ? new DomainError('invalid_request', 'The request path is not a valid URL: a percent-encoding in it is malformed', [{ field: 'path', reason: 'malformed percent-encoding' }])
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new DomainError('invalid_request', 'A part of the request path is too long', [{ field: 'path', reason: 'a path parameter is over the length limit' }])
          : error;
    sendError(refusal, request, reply, logger);
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * What Node's HTTP parser refuses before there is a request at all (`clientErrorHandler`: an unknown
 * method, a malformed request line, headers over the size limit, a request that took too long):
 * answered in the error contract, with a request id made for it (also as X-Request-Id), and the
 * connection closed, as Node and Fastify do.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_header_too_large', 'The request headers (or its URL) are over the size limit']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time']
        : [400, 'invalid_request', 'The request is not valid HTTP (its method, request line or headers)'];
  const requestId = newRequestId();
  const body = JSON.stringify(errorBody(new DomainError(code as never, message), requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
