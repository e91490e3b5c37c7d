import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** A request whose `Idempotency-Key` the gateway claimed (its answer is kept after the handler: start-gateway). */
export interface IdempotentRequest extends FastifyRequest {
  idempotency?: { scope: string; key: string };
}

/** The key a request was claimed under, in its scope, with the body as the client sent it. */
export interface IdempotencyClaimOf {
  scope: string;
  key: string;
  body: unknown;
}

/**
 * The request's claimed `Idempotency-Key` (undefined without one): for a handler whose work must also
 * be idempotent behind the gateway, since the gateway keeps no answer of a 5xx and a retry then runs
 * again (captures: a retry answers the capture the first request made).
 */
export const IdempotencyClaim = createParamDecorator((_data: unknown, context: ExecutionContext): IdempotencyClaimOf | undefined => {
  const request = context.switchToHttp().getRequest<IdempotentRequest>();
  return request.idempotency ? { ...request.idempotency, body: request.body } : undefined;
});
