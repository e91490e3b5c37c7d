import { DomainError, fieldNestedDeeperThan, MAX_BODY_NESTING } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A route hook (after authentication, before the idempotency claim and the handler): a JSON body
 * nesting objects or arrays more than MAX_BODY_NESTING levels is a 422 naming its top-level field,
 * before the transport, the validators or a digest recurse through it and overflow their stacks.
 * Raw bodies (the form builder's signed hook keeps a Buffer) are checked where they are parsed.
 */
export function refuseOverNestedBody(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Buffer.isBuffer(body)) return done();
  const field = fieldNestedDeeperThan(body);
  if (field === null) return done();
  done(
    new DomainError('validation_failed', `The request body nests objects or arrays more than ${MAX_BODY_NESTING} levels deep`, [
      { field, reason: `nests more than ${MAX_BODY_NESTING} levels deep` },
    ]),
  );
}
