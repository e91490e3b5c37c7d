import { InProcessBus } from '@dcr/transport';
import { DirectLane } from '../../apps/gateway/src/http/direct-lane';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * `GET /api/v1/me` is a direct route: a plain GET of its path is answered by the direct lane ahead of
 * Fastify, anything else about it (a query string, an Origin) by the router. Both must answer alike;
 * these tests send the same request both ways and compare everything but the per-request values.
 * The router's way is a query string of no parameter (`?&`: the route takes none, any is a 400, and
 * fetch drops a bare `?`).
 */
describe('the direct lane against the router, on a running gateway', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();
  let laneAnswers: jest.SpyInstance;
  let applicationId: string;
  let apiToken: string;

  const viaLane = '/api/v1/me';
  const viaRouter = '/api/v1/me?&';

  beforeAll(async () => {
    laneAnswers = jest.spyOn(DirectLane.prototype, 'answer');
    us = await startCountry({
      country: 'US',
      peers: [],
      transport: 'inprocess',
      bus: new InProcessBus(),
      subjectRefKey: randomSecret(),
      adminToken,
      env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1000' },
    });
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken, { name: 'Lane', environment: 'sandbox' }));
  });

  let closed = false;

  afterAll(async () => {
    if (!closed) await us?.close();
    laneAnswers.mockRestore();
  });

  /** Lane answers (true results) since the last call. */
  function answeredByLane(): number {
    const answered = laneAnswers.mock.results.filter((result) => result.value === true).length;
    laneAnswers.mockClear();
    return answered;
  }

  const headerNames = (headers: Headers) => [...headers.keys()].filter((name) => name !== 'date').sort();

  async function both(options: Parameters<typeof http>[3]) {
    answeredByLane();
    const lane = await http(us.url, 'GET', viaLane, options);
    expect(answeredByLane()).toBe(1);
    const router = await http(us.url, 'GET', viaRouter, options);
    expect(answeredByLane()).toBe(0);
    return { lane, router };
  }

  it("serves from an HTTP server with Fastify's settings (its serverFactory applies them as Fastify does)", () => {
    const server = us.gateway.app.getHttpServer() as import('node:http').Server;
    // Fastify's defaults, not Node's (5 s keep-alive, 300 s request timeout).
    expect(server.keepAliveTimeout).toBe(72_000);
    expect(server.requestTimeout).toBe(0);
    expect(server.timeout).toBe(0);
  });

  it('answers an API token alike: status, headers, body', async () => {
    const { lane, router } = await both({ token: apiToken });
    expect(lane.status).toBe(200);
    expect(router.status).toBe(200);
    expect(headerNames(lane.headers)).toEqual(headerNames(router.headers));
    expect(headerNames(lane.headers)).toEqual(['cache-control', 'connection', 'content-length', 'content-type', 'keep-alive', 'ratelimit', 'ratelimit-policy', 'x-request-id']);
    for (const name of ['content-type', 'content-length', 'ratelimit-policy']) expect(lane.headers.get(name)).toBe(router.headers.get(name));
    expect(lane.body).toEqual(router.body);
    expect(lane.body).toMatchObject({ application_id: applicationId, credential: { kind: 'api_token' }, country: 'US' });
    // One bucket: the router's answer came one request after the lane's.
    const remaining = (response: { headers: Headers }) => Number(/r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]);
    expect(remaining(router)).toBe(remaining(lane) - 1);
  });

  it('answers the admin token alike, without rate-limit headers', async () => {
    const { lane, router } = await both({ token: adminToken });
    expect([lane.status, router.status]).toEqual([200, 200]);
    expect(lane.body).toEqual(router.body);
    expect(lane.body).toMatchObject({ application_id: null, credential: { kind: 'admin' } });
    expect(headerNames(lane.headers)).toEqual(headerNames(router.headers));
    expect(lane.headers.get('ratelimit')).toBeNull();
  });

  it('refuses alike: an unknown token (401), a publishable key (403), no credential (401)', async () => {
    const publishableKey = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken })).body.key;
    for (const [options, status, code] of [
      [{ token: 'not-a-token-of-anyone' }, 401, 'unauthenticated'],
      [{ headers: { 'x-publishable-key': publishableKey } }, 403, 'forbidden'],
      [{}, 401, 'unauthenticated'],
    ] as const) {
      const { lane, router } = await both(options);
      expect([lane.status, router.status]).toEqual([status, status]);
      expect(lane.body).toEqual({ ...router.body, request_id: lane.headers.get('x-request-id') });
      expect(lane.body.code).toBe(code);
      expect(headerNames(lane.headers)).toEqual(headerNames(router.headers));
    }
  });

  it('keeps the caller’s request id, and logs and counts both paths as the same route', async () => {
    const metricOf = async (status: number) => {
      const text = (await http(us.url, 'GET', '/metrics')).body as string;
      const line = new RegExp(`http_requests_total\\{[^}]*method="GET"[^}]*route="/api/v1/me"[^}]*status="${status}"[^}]*\\} (\\d+)`).exec(text);
      return Number(line?.[1] ?? 0);
    };
    const before = await metricOf(200);
    const lane = await http(us.url, 'GET', viaLane, { token: apiToken, headers: { 'x-request-id': 'lane-trace-0001' } });
    const router = await http(us.url, 'GET', viaRouter, { token: apiToken, headers: { 'x-request-id': 'router-trace-0001' } });
    expect(lane.headers.get('x-request-id')).toBe('lane-trace-0001');
    expect(router.headers.get('x-request-id')).toBe('router-trace-0001');
    expect(await metricOf(200)).toBe(before + 2);
    await eventually(async () => ['lane-trace-0001', 'router-trace-0001'].every((id) => us.logs.lines.some((line) => line.request_id === id)));
    const lineOf = (id: string) => us.logs.lines.find((line) => line.request_id === id)!;
    expect(lineOf('lane-trace-0001')).toMatchObject({ service: 'gateway', method: 'GET', url: '/api/v1/me', route: '/api/v1/me', status: 200, msg: 'request completed' });
    expect(lineOf('router-trace-0001')).toMatchObject({ service: 'gateway', method: 'GET', url: '/api/v1/me?', route: '/api/v1/me', status: 200, msg: 'request completed' });
    expect(Object.keys(lineOf('lane-trace-0001')).sort()).toEqual(Object.keys(lineOf('router-trace-0001')).sort());
  });

  it('leaves a browser call (Origin) to the router, which answers its CORS', async () => {
    answeredByLane();
    const response = await http(us.url, 'GET', viaLane, { token: apiToken, headers: { origin: 'https://unregistered.example' } });
    expect(answeredByLane()).toBe(0);
    expect(response.status).toBe(200);
  });

  it('answers a caller past its rate limit alike (429, Retry-After)', async () => {
    // A bucket of 1,000 refilled at 1/s: the lane and the router empty it together.
    let lane = await http(us.url, 'GET', viaLane, { token: apiToken });
    for (let i = 0; i < 1000 && lane.status === 200; i++) {
      await http(us.url, 'GET', viaRouter, { token: apiToken });
      lane = await http(us.url, 'GET', viaLane, { token: apiToken });
    }
    const router = await http(us.url, 'GET', viaRouter, { token: apiToken });
    expect([lane.status, router.status]).toEqual([429, 429]);
    expect(lane.body).toEqual({ ...router.body, request_id: lane.headers.get('x-request-id') });
    expect(Number(lane.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(headerNames(lane.headers)).toEqual(headerNames(router.headers));
  });

  // Last: it closes the country. From Fastify's preClose on, the lane leaves every request to
  // Fastify, which answers 503 or closes the connection (the lane's side: direct-lane.spec.ts).
  it('stops answering when the gateway closes', async () => {
    const laneClosed = jest.spyOn(DirectLane.prototype, 'close');
    closed = true;
    await us.close();
    expect(laneClosed).toHaveBeenCalledTimes(1);
    laneClosed.mockRestore();
  });
});
