import { SetMetadata } from '@nestjs/common';
import { HEADERS_METADATA } from '@nestjs/common/constants';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { ControllerMethod } from './controller-methods';
import type { DirectRequest } from './direct-lane';

const DIRECT_ROUTE = 'dcr:direct-route';

/**
 * For a GET handler whose answer is a synchronous function of the (authenticated) request alone: it
 * takes only `@Req()`, reads only what `DirectRequest` has (id, method, url, headers, principal),
 * returns the body (a string or a JSON value) and sets headers with constant `@Header()` values only.
 *
 * Such a route is answered without Nest's per-request pipeline (execution context, interceptor
 * chain, response promise), which on `GET /api/v1/me` was a fifth of the gateway's work: Fastify
 * calls the method itself, after the route's authentication hook, and a thrown error still goes
 * through Nest's exception filters (Nest installs them as Fastify's error handler). A plain GET of
 * the exact path is answered by the direct lane (DirectLane) before Fastify's router, with the same
 * steps. The route keeps its controller, so its OpenAPI description and policy decorators are the
 * same as any other's.
 */
export const DirectRoute = () => SetMetadata(DIRECT_ROUTE, true);

/** A `@DirectRoute()` method, ready to answer: its Fastify handler, and for the lane its parts. */
export interface DirectRouteHandler {
  /** Fastify's handler of the route. */
  handler: RouteHandlerMethod;
  /** The method, bound to its controller. */
  answer(request: DirectRequest): unknown;
  /** Its `@Header()` values, lower-case names. */
  headers: ReadonlyArray<readonly [string, string]>;
}

/** The handler of a route marked `@DirectRoute()`, or none for any other route. */
export function directHandlerFor(resolved: ControllerMethod, url: string): DirectRouteHandler | undefined {
  if (Reflect.getMetadata(DIRECT_ROUTE, resolved.method) !== true) return undefined;
  // Nest's handler of a path with parameters also refuses empty ones (404); a direct one would not.
  if (url.includes(':')) throw new Error(`@DirectRoute() is for paths without parameters (${url})`);
  const instance = resolved.instance as Record<string, (request: DirectRequest) => unknown>;
  if (!instance || typeof instance[resolved.methodName] !== 'function') throw new Error(`${resolved.controller.name}.${resolved.methodName} has no instance to answer directly`);
  const declared = (Reflect.getMetadata(HEADERS_METADATA, resolved.method) ?? []) as Array<{ name: string; value: unknown }>;
  const headers = declared.map(({ name, value }) => {
    if (typeof value !== 'string') throw new Error(`@DirectRoute() takes constant @Header() values (${resolved.controller.name}.${resolved.methodName})`);
    return [name.toLowerCase(), value] as const;
  });
  const answer = instance[resolved.methodName].bind(instance);
  return {
    answer,
    headers,
    handler: function directRoute(request: FastifyRequest, reply: FastifyReply) {
      for (const [name, value] of headers) reply.header(name, value);
      void reply.send(answer(request));
    },
  };
}
