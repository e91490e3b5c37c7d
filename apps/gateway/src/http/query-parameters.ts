import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { DECORATORS } from '@nestjs/swagger';
import { DomainError, FieldIssue } from '@dcr/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ControllerMethod } from './controller-methods';

/** Where a query parameter a route does not take is refused: the API, not pages, scripts or discovery. */
export const API_PREFIX = '/api/v1/';

/** Why a query parameter with an empty name (`?=x`, `?&=x`, `?=`) is refused: its name cannot say it. */
export const EMPTY_QUERY_NAME = 'a query parameter has an empty name (`=value` with nothing before the `=`)';

/**
 * The query issues of a refusal as the caller reads them: the issue of a parameter with an empty
 * name (field `''`), which the validation says as "property  should not exist", says what is wrong.
 */
export const describedQueryIssues = (issues: FieldIssue[]): FieldIssue[] =>
  issues.map((issue) => (issue.field === '' ? { field: '', reason: EMPTY_QUERY_NAME } : issue));

/** Why a parameter taken once (`?flavor=a&flavor=b`, `?limit=1&limit=2`) is refused: neither value is wrong. */
export const GIVEN_ONCE = 'must be given once';

/** The issue of a query parameter given more than once where a route takes it once. */
export const repeatedQueryParameter = (name: string): FieldIssue => ({ field: name, reason: GIVEN_ONCE });

/**
 * The parameters of `query` given more than once (Fastify's parser hands them over as an array)
 * that its DTO takes once: a property of the DTO whose declared type is not an array. A parameter
 * the DTO takes as a list (the audit's `type`) may be repeated; one it does not know is left to the
 * DTO's own refusal of unknown parameters.
 */
export function repeatedQueryParameters(dto: abstract new (...args: never[]) => unknown, query: Record<string, unknown>): string[] {
  return Object.keys(query).filter((name) => {
    if (!Array.isArray(query[name])) return false;
    const declared: unknown = Reflect.getMetadata('design:type', dto.prototype as object, name);
    return declared !== undefined && declared !== Array;
  });
}

/** The refusal of query parameters a route does not take, as a query DTO refuses them (forbidNonWhitelisted). */
export const unknownQueryParameters = (names: string[]) =>
  new DomainError(
    'invalid_request',
    'Invalid query parameters',
    describedQueryIssues(names.map((name) => ({ field: name, reason: `property ${name} should not exist` }))),
  );

/** Types the validation pipe does not validate: a `@Query()` of one of them is read whole, unchecked. */
const UNVALIDATED = new Set<unknown>([String, Boolean, Number, Array, Object, Buffer, Date, undefined]);

/**
 * The query parameters a route takes, from its declarations: the names of its `@Query('name')`
 * parameters and of its `@ApiQuery()` documentation (which is how a route reading the query whole,
 * without a DTO, declares what it reads). `undefined` for a route whose query is checked by its
 * query DTO (`@Query() query: SomeQueryDto`): the validation pipe refuses unknown parameters there,
 * in the same answer as the DTO's other issues. A route reading the query whole with neither a DTO
 * nor `@ApiQuery()` declarations takes nothing one could name: that fails the start.
 */
export function acceptedQueryParameters(resolved: ControllerMethod): ReadonlySet<string> | undefined {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, resolved.controller, resolved.methodName) ?? {}) as Record<string, { index: number; data?: unknown }>;
  const types = (Reflect.getMetadata('design:paramtypes', resolved.controller.prototype, resolved.methodName) ?? []) as unknown[];
  const documented = ((Reflect.getMetadata(DECORATORS.API_PARAMETERS, resolved.method) ?? []) as Array<{ in?: string; name?: string }>)
    .filter((parameter) => parameter.in === 'query' && typeof parameter.name === 'string')
    .map((parameter) => parameter.name as string);
  const accepted = new Set<string>(documented);
  let readWhole = false;
  for (const [key, { index, data }] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== RouteParamtypes.QUERY) continue;
    if (typeof data === 'string') accepted.add(data);
    else if (!UNVALIDATED.has(types[index])) return undefined;
    else readWhole = true;
  }
  if (readWhole && documented.length === 0) {
    throw new Error(`${resolved.controller.name}.${resolved.methodName} reads its query whole without a query DTO: declare what it takes with @ApiQuery()`);
  }
  return accepted;
}

/**
 * For the gateway's `onRoute` hook: a `preHandler` hook (run after the route's authentication, before
 * its handler and the Idempotency-Key claim) refusing, with 400 naming them, the query parameters an
 * `/api/v1/` route does not take (acceptedQueryParameters), as routes with a query DTO refuse them; a
 * misspelt parameter is never ignored. `undefined` for other routes (hosted pages, scripts,
 * `/.well-known`, `/oauth`: they take any, tracking parameters such as `utm_source` included) and for
 * routes whose query DTO does it. A request without a query string costs one `indexOf`.
 */
export function queryParameterCheck(url: string, resolved: ControllerMethod) {
  if (!url.startsWith(API_PREFIX)) return undefined;
  const accepted = acceptedQueryParameters(resolved);
  if (accepted === undefined) return undefined;
  return function refuseUnknownQueryParameters(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    if (request.url.indexOf('?') === -1) return done();
    const unknown = Object.keys(request.query as Record<string, unknown>).filter((name) => !accepted.has(name));
    done(unknown.length === 0 ? undefined : unknownQueryParameters(unknown));
  };
}
