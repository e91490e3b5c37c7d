import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../auth/principal';

/** Where response headers are set: Fastify's reply, or the direct lane's own set. Names in lower case. */
export interface HeaderSink {
  header(name: string, value: string): HeaderSink;
}

/**
 * What a direct route's admission and handler read of a request: a subset of Fastify's request, so
 * that the same code serves the route whether Fastify or the direct lane answers it.
 */
export interface DirectRequest {
  id: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  principal?: Principal;
}

/** One route the lane answers: everything about it is fixed when the route is registered. */
export interface DirectLaneRoute {
  /** Exact path, without a query string. */
  path: string;
  /** The route's authentication and rate limit: sets `request.principal` and headers, or throws. */
  admit(request: DirectRequest, headers: HeaderSink): void;
  /** The handler: the body, as a string or a JSON value. */
  answer(request: DirectRequest): unknown;
  /** Headers every answer of the route carries, before the handler's (deprecation). */
  before: ReadonlyArray<readonly [string, string]>;
  /** The handler's own constant headers (`@Header()`), on successful answers only. */
  after: ReadonlyArray<readonly [string, string]>;
  /** The route's metrics cells. */
  observe(method: string, status: number, elapsedMs: number): void;
}

/** The parts of the gateway's edge the lane shares with the Fastify path, so both behave alike. */
export interface DirectLaneEdge {
  requestIdOf(request: IncomingMessage): string;
  /** The contract's error answer for anything thrown (error-responder's `errorAnswer`: it logs a 5xx). */
  errorAnswer(error: unknown, requestId: string, hasHeader: (name: string) => boolean): { status: number; body: unknown; headers: Array<[string, string]> };
  /** The metrics sample and access line of an answer. */
  recordAnswer(request: DirectRequest, status: number, elapsedMs: number, route: string, observe: DirectLaneRoute['observe']): void;
}

class LaneHeaders implements HeaderSink {
  readonly values: Record<string, string> = {};
  header(name: string, value: string): HeaderSink {
    this.values[name] = value;
    return this;
  }
}

/**
 * The direct lane: `@DirectRoute()` routes (GETs whose answer is a synchronous function of the
 * authenticated request, such as `GET /api/v1/me`) answered at the HTTP server, ahead of Fastify's
 * router, hooks and reply, which on `/api/v1/me` were about a fifth of the gateway's CPU per request
 * (docs/performance.md, twelfth session). It is installed through Fastify's `serverFactory`.
 *
 * It runs the same steps as the Fastify path, through the same code: the request id, the route's
 * constant headers, the route's authentication and rate limit (Authenticator), the handler, the
 * contract's error answer (error-responder) and the metrics and access line of the answer. It takes
 * only what it answers exactly as the router would: a GET of an exact registered path, no query
 * string, no `Origin` (CORS stays with the router's hook), while the server is not closing. Anything
 * else reaches Fastify untouched: the lane decides before any step with an effect.
 *
 * What differs: the duration it records ends when the answer is handed to the socket, not at the
 * response's `finish` event; and Fastify's global hooks do not run for these requests, so a global
 * hook added to the gateway must be added here too (the test `direct-lane.spec.ts` compares the two
 * paths' answers for the same requests).
 */
export class DirectLane {
  private readonly routes = new Map<string, DirectLaneRoute>();
  private edge: DirectLaneEdge | undefined;
  private closing = false;

  /** The edge's shared steps, known once the application is created (the server exists before). */
  attach(edge: DirectLaneEdge): void {
    this.edge = edge;
  }

  add(route: DirectLaneRoute): void {
    if (route.path.includes(':') || route.path.includes('?')) throw new Error(`the direct lane takes exact paths only (${route.path})`);
    if (this.routes.has(route.path)) throw new Error(`${route.path} is already a direct route`);
    this.routes.set(route.path, route);
  }

  /** From the server's close: what is still asked goes to Fastify, which answers 503 or closes. */
  close(): void {
    this.closing = true;
  }

  get size(): number {
    return this.routes.size;
  }

  /** Answers the request and returns true, or returns false and leaves it to Fastify. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' || this.closing || this.edge === undefined || req.headers.origin !== undefined) return false;
    const route = this.routes.get(req.url ?? '');
    if (route === undefined) return false;
    const startedAt = performance.now();
    const edge = this.edge;
    const request: DirectRequest = { id: edge.requestIdOf(req), method: 'GET', url: route.path, headers: req.headers };
    const headers = new LaneHeaders();
    headers.header('x-request-id', request.id);
    for (const [name, value] of route.before) headers.header(name, value);
    let status = 200;
    let body: string;
    try {
      route.admit(request, headers);
      const answer = route.answer(request);
      body = typeof answer === 'string' ? answer : JSON.stringify(answer);
      for (const [name, value] of route.after) headers.header(name, value);
    } catch (error) {
      const failed = edge.errorAnswer(error, request.id, (name) => headers.values[name] !== undefined);
      status = failed.status;
      body = JSON.stringify(failed.body);
      for (const [name, value] of failed.headers) headers.header(name, value);
    }
    headers.header('content-length', String(Buffer.byteLength(body)));
    res.writeHead(status, headers.values);
    res.end(body);
    edge.recordAnswer(request, status, performance.now() - startedAt, route.path, route.observe);
    return true;
  }
}
