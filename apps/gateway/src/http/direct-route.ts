import { SetMetadata } from '@nestjs/common';
import { HEADERS_METADATA } from '@nestjs/common/constants';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { ControllerMethod } from './controller-methods';

const DIRECT_ROUTE = 'dcr:direct-route';

/**
 * For a GET handler whose answer is a synchronous function of the (authenticated) request alone: it
 * takes only `@Req()`, returns the body (a string or a JSON value) and sets headers with `@Header()`
 * only. Fastify then calls the method itself, without Nest's per-request pipeline (execution context,
 * interceptor chain, response promise), which on `GET /api/v1/me` was a fifth of the gateway's work.
 * Authentication still runs first (a route hook, see Authenticator), and a thrown error still goes
 * through Nest's exception filters (Nest installs them as Fastify's error handler). The route keeps
 * its controller, so its OpenAPI description and policy decorators are the same as any other's.
 */
export const DirectRoute = () => SetMetadata(DIRECT_ROUTE, true);

/** Fastify's handler for a route marked `@DirectRoute()`, or none for any other route. */
export function directHandlerFor(resolved: ControllerMethod, url: string): RouteHandlerMethod | undefined {
  if (Reflect.getMetadata(DIRECT_ROUTE, resolved.method) !== true) return undefined;
  // Nest's handler of a path with parameters also refuses empty ones (404); a direct one would not.
  if (url.includes(':')) throw new Error(`@DirectRoute() is for paths without parameters (${url})`);
  const instance = resolved.instance as Record<string, (request: FastifyRequest) => unknown>;
  if (!instance || typeof instance[resolved.methodName] !== 'function') throw new Error(`${resolved.controller.name}.${resolved.methodName} has no instance to answer directly`);
  const headers = (Reflect.getMetadata(HEADERS_METADATA, resolved.method) ?? []) as Array<{ name: string; value: string }>;
  for (const header of headers) {
    if (typeof header.value !== 'string') throw new Error(`@DirectRoute() takes constant @Header() values (${resolved.controller.name}.${resolved.methodName})`);
  }
  const answer = instance[resolved.methodName].bind(instance);
  return function directRoute(request: FastifyRequest, reply: FastifyReply) {
    for (const header of headers) reply.header(header.name, header.value);
    void reply.send(answer(request));
  };
}
