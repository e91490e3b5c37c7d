import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'onSend' | 'onResponse';

/** A route option that takes one hook or several, as a list. */
export function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

/** The route's methods as a list (Fastify takes one method or several). */
export function routeMethods(route: RouteOptions): string[] {
  return Array.isArray(route.method) ? route.method : [route.method];
}

/**
 * Adds a hook of one route, from the `onRoute` hook, after the route's own hooks of that kind
 * (`'last'`) or before them (`'first'`).
 */
export function addRouteHook(route: RouteOptions, name: HookName, hook: unknown, where: 'first' | 'last' = 'last'): void {
  const existing = hookList((route as unknown as Record<HookName, unknown>)[name]);
  (route as unknown as Record<HookName, unknown[]>)[name] = where === 'first' ? [hook, ...existing] : [...existing, hook];
}
