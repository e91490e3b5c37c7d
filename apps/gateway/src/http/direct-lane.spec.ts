import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '@dcr/domain';
import pino from 'pino';
import { DirectLane, DirectLaneRoute, DirectRequest } from './direct-lane';
import { errorAnswer } from './error-responder';
import { requestIdOf } from './request-id';

interface Recorded {
  id: string;
  status: number;
  route: string;
}

/** A server with the lane in front of a stand-in for Fastify that answers 299 "router". */
async function serve(lane: DirectLane): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (lane.answer(request, response)) return;
    response.writeHead(299, { 'content-type': 'text/plain' });
    response.end('router');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('DirectLane', () => {
  const recorded: Recorded[] = [];
  const observed: Array<[string, number]> = [];
  const errors: unknown[] = [];
  let admitted: DirectRequest[];
  let behaviour: 'allow' | 'refuse' | 'limit' | 'crash';
  let lane: DirectLane;
  let url: string;
  let server: Server;

  const route: DirectLaneRoute = {
    path: '/api/v1/me',
    admit(request, headers) {
      admitted.push(request);
      if (behaviour === 'refuse') throw new DomainError('unauthenticated', 'The API token is not valid or was revoked');
      headers.header('ratelimit-policy', '"default";q=10;w=1').header('ratelimit', '"default";r=9;t=1');
      if (behaviour === 'limit') throw new DomainError('rate_limited', 'Rate limit exceeded');
      request.principal = { kind: 'admin' };
    },
    answer(request) {
      if (behaviour === 'crash') throw new Error('password hunter2 in a stack');
      return { kind: request.principal?.kind, id: request.id };
    },
    before: [['deprecation', '@1763769600']],
    after: [['content-type', 'application/json; charset=utf-8']],
    observe: (method, status) => observed.push([method, status]),
  };

  beforeEach(async () => {
    recorded.length = 0;
    observed.length = 0;
    errors.length = 0;
    admitted = [];
    behaviour = 'allow';
    lane = new DirectLane();
    lane.add(route);
    const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(JSON.parse(line)) });
    lane.attach({
      requestIdOf,
      errorAnswer: (error, requestId, hasHeader) => errorAnswer(error, requestId, logger, hasHeader),
      recordAnswer: (request, status, _elapsed, path, observe) => {
        observe(request.method, status, 0);
        recorded.push({ id: request.id, status, route: path });
      },
    });
    ({ url, server } = await serve(lane));
  });

  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a GET of its exact path itself: request id, route headers, admission headers, body, record', async () => {
    const response = await fetch(`${url}/api/v1/me`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { kind: string; id: string };
    expect(body).toEqual({ kind: 'admin', id: expect.stringMatching(/^req_[0-9a-z]{16}$/) });
    expect(response.headers.get('x-request-id')).toBe(body.id);
    expect(response.headers.get('deprecation')).toBe('@1763769600');
    expect(response.headers.get('ratelimit')).toBe('"default";r=9;t=1');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(JSON.stringify(body).length));
    expect(recorded).toEqual([{ id: body.id, status: 200, route: '/api/v1/me' }]);
    expect(observed).toEqual([['GET', 200]]);
  });

  it("keeps a caller's sane X-Request-Id, as the router does", async () => {
    const response = await fetch(`${url}/api/v1/me`, { headers: { 'x-request-id': 'caller-chosen-id-42' } });
    expect(response.headers.get('x-request-id')).toBe('caller-chosen-id-42');
    expect(admitted[0].id).toBe('caller-chosen-id-42');
  });

  it('leaves everything else to the router, before any admission', async () => {
    const routed = [
      await fetch(`${url}/api/v1/me?fields=all`),
      await fetch(`${url}/api/v1/me/`),
      await fetch(`${url}/api/v1/other`),
      await fetch(`${url}/api/v1/me`, { method: 'HEAD' }),
      await fetch(`${url}/api/v1/me`, { method: 'POST', body: '{}' }),
      await fetch(`${url}/api/v1/me`, { headers: { origin: 'https://shop.example' } }),
    ];
    expect(routed.map((response) => response.status)).toEqual([299, 299, 299, 299, 299, 299]);
    expect(admitted).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it('leaves every request to the router once closing, or before the edge is attached', async () => {
    lane.close();
    expect((await fetch(`${url}/api/v1/me`)).status).toBe(299);
    const unattached = new DirectLane();
    unattached.add(route);
    const other = await serve(unattached);
    try {
      expect((await fetch(`${other.url}/api/v1/me`)).status).toBe(299);
    } finally {
      await new Promise((resolve) => other.server.close(resolve));
    }
    expect(admitted).toEqual([]);
  });

  it("answers a refused caller with the contract's error, without the handler or its headers", async () => {
    behaviour = 'refuse';
    const response = await fetch(`${url}/api/v1/me`);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { request_id: string };
    expect(body).toEqual({ message: 'The API token is not valid or was revoked', code: 'unauthenticated', request_id: response.headers.get('x-request-id') });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('deprecation')).toBe('@1763769600');
    expect(response.headers.get('ratelimit')).toBeNull();
    expect(recorded).toEqual([{ id: body.request_id, status: 401, route: '/api/v1/me' }]);
  });

  it('keeps the rate-limit headers on a 429 and adds Retry-After when the limiter did not', async () => {
    behaviour = 'limit';
    const response = await fetch(`${url}/api/v1/me`);
    expect(response.status).toBe(429);
    expect(response.headers.get('ratelimit')).toBe('"default";r=9;t=1');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as { code: string }).code).toBe('rate_limited');
  });

  it('answers a failing handler with a 500 that says nothing of the error, and logs it with the request id', async () => {
    behaviour = 'crash';
    const response = await fetch(`${url}/api/v1/me`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ message: 'Internal server error', code: 'internal_error', request_id: response.headers.get('x-request-id') });
    expect(text).not.toContain('hunter2');
    expect(errors).toEqual([expect.objectContaining({ msg: 'request failed', request_id: response.headers.get('x-request-id') })]);
    expect(recorded.map((entry) => entry.status)).toEqual([500]);
  });

  it('takes exact paths only, once each', () => {
    expect(() => lane.add({ ...route, path: '/api/v1/items/:id' })).toThrow('exact paths only');
    expect(() => lane.add({ ...route, path: '/api/v1/me?x=1' })).toThrow('exact paths only');
    expect(() => lane.add(route)).toThrow('already a direct route');
  });
});
