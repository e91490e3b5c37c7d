import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { DomainError, FieldIssue } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ControllerMethod } from './controller-methods';
import { API_PREFIX } from './query-parameters';

/** Whether a controller method reads the request body (a `@Body()` parameter, whole or a field of it). */
function readsBody(resolved: ControllerMethod): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, resolved.controller, resolved.methodName) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => Number(key.split(':')[0]) === RouteParamtypes.BODY);
}

/** Why a field is refused in the body of a route that takes none (as a DTO refuses a field it does not know). */
const noBodyIssue = (field: string): FieldIssue => ({ field, reason: `property ${field} should not exist (this route takes no request body)` });

/**
 * For the gateway's `onRoute` hook: a `preHandler` hook refusing, with 422 naming each field, a body
 * sent to an `/api/v1/` route that takes none (its method reads no `@Body()`: activate, rotate a
 * secret, enable, replay, a DELETE), as a route with a DTO refuses fields it does not know: a field
 * the caller believes was read is never dropped while the route acts. An empty body, `{}` or `null`
 * passes. `undefined` for routes that read their body, and outside `/api/v1/` (the form builder's
 * signed hooks and the person's pages read theirs their own way).
 */
export function bodyCheck(url: string, resolved: ControllerMethod) {
  if (!url.startsWith(API_PREFIX) || readsBody(resolved)) return undefined;
  return function refuseUnreadBody(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const body: unknown = request.body;
    if (body === undefined || body === null) return done();
    if (typeof body === 'object' && !Array.isArray(body)) {
      const fields = Object.keys(body);
      return done(fields.length === 0 ? undefined : new DomainError('validation_failed', 'The request did not pass validation', fields.map(noBodyIssue)));
    }
    if (body === '' || (Array.isArray(body) && body.length === 0)) return done();
    done(new DomainError('validation_failed', 'The request did not pass validation', [{ field: 'body', reason: 'this route takes no request body' }]));
  };
}
