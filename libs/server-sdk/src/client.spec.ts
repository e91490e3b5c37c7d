import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
// Relative imports only: the package must work on its own, without the workspace's other libs.
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidRequestError,
  NotFoundError,
  paginate,
  RateLimitError,
  SDK_VERSION,
  ServiceClient,
  ServiceClientOptions,
  ServiceConnectionError,
  ServiceError,
  ServiceTimeoutError,
  WrongCountryError,
} from './index';
import { FakeApi, FakeReply } from './testing/fake-api';

const API_TOKEN = 'uY8x_test_api_token_value';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('ServiceClient', () => {
  let api: FakeApi;
  let sleeps: number[];

  const client = (options: Partial<ServiceClientOptions> = {}) =>
    new ServiceClient({
      apiKey: API_TOKEN,
      baseUrl: api.url,
      // Waits are recorded, not slept, so the retry tests take milliseconds.
      sleep: async (ms) => void sleeps.push(ms),
      ...options,
    });
  const errorOf = async (promise: Promise<unknown>): Promise<ServiceError> => {
    try {
      await promise;
    } catch (error) {
      return error as ServiceError;
    }
    throw new Error('the call succeeded');
  };
  const errorBody = (code: string, extra: Record<string, unknown> = {}) => ({ message: `because ${code}`, code, request_id: 'req_from_body', ...extra });

  beforeAll(async () => {
    api = await new FakeApi().start();
  });

  beforeEach(() => {
    api.reset();
    sleeps = [];
  });

  afterAll(async () => {
    await api.close();
  });

  describe('requests', () => {
    it('authenticates with the API token and sends and reads JSON', async () => {
      api.replies({ status: 201, body: { consent_record: { record_id: 'rec_us0123', status: 'granted' } } });
      const params = {
        flow_id: 'flw_dev_0123456789abcdef',
        subject: { email: 'ada@example.com' },
        decisions: { newsletter: { decision: 'granted' as const, default_checked: false, mandatory: false } },
        captured_at: '2026-11-20T10:00:00.000Z',
      };
      const created = await client({ appInfo: 'acme-crm/3.1' }).consentRecords.create(params);
      expect(created).toEqual({ consent_record: { record_id: 'rec_us0123', status: 'granted' } });
      const [request] = api.requests;
      expect(request).toMatchObject({ method: 'POST', path: '/api/v1/consent_records', json: params });
      expect(request.headers).toMatchObject({
        authorization: `Bearer ${API_TOKEN}`,
        accept: 'application/json',
        'content-type': 'application/json',
        'user-agent': `dcr-server-sdk/${SDK_VERSION} node/${process.versions.node} acme-crm/3.1`,
      });
    });

    it('puts the answer’s details on a non-enumerable lastResponse', async () => {
      api.replies({ status: 200, body: { id: 'flw_1' }, headers: { 'x-request-id': 'req_abc', 'idempotent-replayed': 'true' } });
      const flow = await client().flows.activate('flw_1', { idempotencyKey: 'activate-flw_1' });
      expect(Object.keys(flow)).toEqual(['id']);
      expect(flow.lastResponse).toMatchObject({
        statusCode: 200,
        requestId: 'req_abc',
        idempotencyKey: 'activate-flw_1',
        idempotentReplayed: true,
        attempts: 1,
      });
      expect(flow.lastResponse.headers['x-request-id']).toBe('req_abc');
    });

    it('sends no body and no content type when a POST has no parameters', async () => {
      await client().webhooks.test('tp_dev_1', 'whk_1');
      expect(api.requests[0]).toMatchObject({ method: 'POST', body: '' });
      expect(api.requests[0].headers['content-type']).toBeUndefined();
    });

    it('addresses every route of the gateway with the right method, path, query and body', async () => {
      const c = client();
      const app = 'tp_dev_0123456789abcdef';
      const flow = 'flw_dev_0123456789abcdef';
      const calls: Array<[() => Promise<unknown>, string, string, Record<string, string>?, unknown?]> = [
        [() => c.decisions.create({ kind: 'consent', flow_id: flow }), 'POST', '/api/v1/decisions', {}, { kind: 'consent', flow_id: flow }],
        [() => c.sessions.create({ flow_id: flow, delivery_mode: 'embed', embed_origin: 'http://localhost:8080' }), 'POST', '/api/v1/decisions', {}, { kind: 'consent', flow_id: flow, delivery_mode: 'embed', embed_origin: 'http://localhost:8080' }],
        [() => c.decisions.verify('dts_us1', { consent_token: 'tok+/=' }), 'GET', '/api/v1/decisions/dts_us1/verify', { consent_token: 'tok+/=' }],
        [() => c.sessions.verify('dts_us1', { consent_token: 'tok' }), 'GET', '/api/v1/decisions/dts_us1/verify', { consent_token: 'tok' }],
        [() => c.decisions.exchange('dts_us1', { exchange_token: 'tok' }), 'POST', '/api/v1/decisions/dts_us1/exchange', {}, { exchange_token: 'tok' }],
        [() => c.sessions.exchange('dts_us1', { exchange_token: 'tok' }), 'POST', '/api/v1/decisions/dts_us1/exchange', {}, { exchange_token: 'tok' }],
        [() => c.decisions.authorize('cap_us1', { subject: { email: 'a@example.com' }, suppress_receipt: true }), 'POST', '/api/v1/decisions/cap_us1/authorize', {}, { subject: { email: 'a@example.com' }, suppress_receipt: true }],
        [() => c.flows.create(app, { name: 'N', pattern: 'standard', purposes: ['newsletter'] }), 'POST', `/api/v1/applications/${app}/flows`, {}, { name: 'N', pattern: 'standard', purposes: ['newsletter'] }],
        [() => c.flows.list(app, { limit: 10, cursor: 'c1' }), 'GET', `/api/v1/applications/${app}/flows`, { limit: '10', cursor: 'c1' }],
        [() => c.flows.get(flow, { version: 2 }), 'GET', `/api/v1/flows/${flow}`, { version: '2' }],
        [() => c.flows.get(flow), 'GET', `/api/v1/flows/${flow}`, {}],
        [() => c.flows.update(flow, { title: 'T' }), 'PATCH', `/api/v1/flows/${flow}`, {}, { title: 'T' }],
        [() => c.flows.activate(flow), 'POST', `/api/v1/flows/${flow}/activate`, {}],
        [() => c.flows.createVersion(flow, { consent_duration: 'P2Y' }), 'POST', `/api/v1/flows/${flow}/versions`, {}, { consent_duration: 'P2Y' }],
        [() => c.consentRecords.status(app, { subject: { external_id: 'crm 4711' } }), 'GET', `/api/v1/applications/${app}/consent_status`, { 'subject[external_id]': 'crm 4711' }],
        [() => c.consentRecords.status(app, { subject: { email: 'ada@example.com' } }), 'GET', `/api/v1/applications/${app}/consent_status`, { 'subject[email]': 'ada@example.com' }],
        [() => c.consentRecords.status(app, { subject: { id: 'sub_1' } }), 'GET', `/api/v1/applications/${app}/consent_status`, { 'subject[id]': 'sub_1' }],
        [() => c.imports.create({ flow_id: flow, dry_run: true, records: [] }), 'POST', '/api/v1/consent_records/imports', {}, { flow_id: flow, dry_run: true, records: [] }],
        [() => c.imports.get('imp_1'), 'GET', '/api/v1/consent_records/imports/imp_1', {}],
        [() => c.imports.get('imp_1', { limit: 200, cursor: 'c2' }), 'GET', '/api/v1/consent_records/imports/imp_1', { limit: '200', cursor: 'c2' }],
        [() => c.receipts.get('rec_us1'), 'GET', '/api/v1/consent_receipts/rec_us1', {}],
        [() => c.receipts.get('rec_us1', { flavor: 'signed' }), 'GET', '/api/v1/consent_receipts/rec_us1', { flavor: 'signed' }],
        [() => c.receipts.get('rec_us1', { flavor: 'dpv' }), 'GET', '/api/v1/consent_receipts/rec_us1', { flavor: 'dpv' }],
        [() => c.webhooks.create(app, { url: 'https://example.com/h', events: ['consent.granted'] }), 'POST', `/api/v1/applications/${app}/webhooks`, {}, { url: 'https://example.com/h', events: ['consent.granted'] }],
        [() => c.webhooks.list(app, { limit: 5 }), 'GET', `/api/v1/applications/${app}/webhooks`, { limit: '5' }],
        [() => c.webhooks.get(app, 'whk_1'), 'GET', `/api/v1/applications/${app}/webhooks/whk_1`, {}],
        [() => c.webhooks.delete(app, 'whk_1'), 'DELETE', `/api/v1/applications/${app}/webhooks/whk_1`, {}],
        [() => c.webhooks.test(app, 'whk_1'), 'POST', `/api/v1/applications/${app}/webhooks/whk_1/test`, {}],
        [() => c.webhooks.enable(app, 'whk_1'), 'POST', `/api/v1/applications/${app}/webhooks/whk_1/enable`, {}],
        [() => c.webhooks.rotateSecret(app, 'whk_1'), 'POST', `/api/v1/applications/${app}/webhooks/whk_1/rotate_secret`, {}],
        [() => c.webhooks.deliveries(app, 'whk_1', { cursor: 'c2' }), 'GET', `/api/v1/applications/${app}/webhooks/whk_1/deliveries`, { cursor: 'c2' }],
        [() => c.webhooks.getDelivery('whd_1'), 'GET', '/api/v1/webhook_deliveries/whd_1', {}],
        [() => c.webhooks.replay('whd_1'), 'POST', '/api/v1/webhook_deliveries/whd_1/replay', {}],
        [() => c.rawRequest('GET', `/api/v1/applications/${app}/audit`, { query: { limit: 10, type: 'consent.granted' } }), 'GET', `/api/v1/applications/${app}/audit`, { limit: '10', type: 'consent.granted' }],
      ];
      for (const [call, method, path, query = {}, body] of calls) {
        api.reset();
        await call();
        const [request] = api.requests;
        expect({ method: request.method, path: request.path, query: Object.fromEntries(request.query), json: request.json }).toEqual({ method, path, query, json: body });
        // Every POST carries an idempotency key; nothing else does (the gateway honours it on POSTs only).
        if (method === 'POST') expect(request.headers['idempotency-key']).toMatch(UUID);
        else expect(request.headers['idempotency-key']).toBeUndefined();
      }
    });

    it('percent-encodes path parameters and refuses empty ones before sending anything', async () => {
      await client().receipts.get('rec/../../admin?x');
      expect(api.requests[0].path).toBe('/api/v1/consent_receipts/rec%2F..%2F..%2Fadmin%3Fx');
      await expect(client().flows.get('')).rejects.toThrow(TypeError);
      await expect(client().webhooks.get('tp_dev_1', undefined as unknown as string)).rejects.toThrow(TypeError);
      expect(api.requests).toHaveLength(1);
    });

    it('keeps a base URL’s path prefix and ignores its trailing slash', async () => {
      await client({ baseUrl: `${api.url}/edge/` }).imports.get('imp_1');
      expect(api.requests[0].path).toBe('/edge/api/v1/consent_records/imports/imp_1');
    });

    it('returns nothing for a 204', async () => {
      api.replies({ status: 204 });
      await expect(client().webhooks.delete('tp_dev_1', 'whk_1')).resolves.toBeUndefined();
    });
  });

  describe('errors', () => {
    const cases: Array<[number, string, new (...args: never[]) => ServiceError]> = [
      [400, 'invalid_request', InvalidRequestError],
      [401, 'unauthenticated', AuthenticationError],
      [403, 'forbidden', ForbiddenError],
      [404, 'not_found', NotFoundError],
      [409, 'idempotency_conflict', ConflictError],
      [410, 'gone', GoneError],
      [413, 'payload_too_large', InvalidRequestError],
      [415, 'unsupported_media_type', InvalidRequestError],
      [421, 'wrong_country', WrongCountryError],
      [422, 'validation_failed', InvalidRequestError],
      [429, 'rate_limited', RateLimitError],
      [500, 'internal_error', APIError],
      [501, 'not_implemented', APIError],
      [503, 'service_unavailable', APIError],
      [504, 'upstream_timeout', APIError],
    ];

    it.each(cases)('maps %i (%s) to its class with the status, code, message, request id and body', async (status, code, ErrorClass) => {
      const body = errorBody(code);
      api.always({ status, body, headers: { 'x-request-id': 'req_from_header' } });
      const error = await errorOf(client({ maxRetries: 0 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toBeInstanceOf(ServiceError);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ name: ErrorClass.name, statusCode: status, code, message: `because ${code}`, requestId: 'req_from_body', body, details: [] });
      expect(JSON.parse(error.rawBody!)).toEqual(body);
      expect(error.headers['x-request-id']).toBe('req_from_header');
    });

    it('carries the details of a 422, field by field', async () => {
      const details = [
        { field: 'decisions.newsletter', reason: 'default_checked consent purpose' },
        { field: 'decisions.analytics', reason: 'missing consent purpose' },
      ];
      api.replies({ status: 422, body: errorBody('validation_failed', { details }) });
      const error = await errorOf(client().consentRecords.create({ flow_id: 'flw_1', subject: { email: 'a@example.com' }, decisions: {}, captured_at: 'now' }));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error.details).toEqual(details);
    });

    it('names the home country of a 421', async () => {
      api.always({ status: 421, body: errorBody('wrong_country', { home_country: 'DE' }) });
      const error = await errorOf(client().receipts.get('rec_de1'));
      expect(error).toBeInstanceOf(WrongCountryError);
      expect((error as WrongCountryError).homeCountry).toBe('DE');
    });

    it('keeps the extra fields of an error body, such as the legal next states of a 409', async () => {
      api.replies({ status: 409, body: errorBody('illegal_transition', { from: 'pending', to: 'fulfilled', allowed: ['authenticating'] }) });
      const error = await errorOf(client().flows.activate('flw_1'));
      expect(error.body).toMatchObject({ allowed: ['authenticating'] });
    });

    it('makes an APIError of a 5xx whose body is not JSON (a proxy page), keeping the text', async () => {
      api.always({ status: 502, raw: '<html>Bad gateway</html>', headers: { 'content-type': 'text/html' } });
      const error = await errorOf(client({ maxRetries: 0 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(APIError);
      expect(error).toMatchObject({ statusCode: 502, code: 'http_502', rawBody: '<html>Bad gateway</html>', body: undefined, requestId: 'req_fake_1' });
    });

    it('refuses a 2xx whose body is not JSON rather than returning it', async () => {
      api.replies({ status: 200, raw: 'not json' });
      const error = await errorOf(client().flows.get('flw_1'));
      expect(error).toBeInstanceOf(APIError);
      expect(error).toMatchObject({ statusCode: 200, code: 'invalid_response', rawBody: 'not json' });
      expect(api.requests).toHaveLength(1);
    });

    it('reads Retry-After onto a RateLimitError', async () => {
      api.always({ status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '7' } });
      const error = await errorOf(client({ maxRetries: 0 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfter).toBe(7);
    });
  });

  describe('retries', () => {
    it('retries a 5xx with exponential backoff and jitter, then succeeds', async () => {
      api.replies({ status: 503, body: errorBody('service_unavailable') }, { status: 500, body: errorBody('internal_error') }, { status: 200, body: { id: 'flw_1' } });
      const flow = await client({ maxRetries: 3, random: () => 0.5 }).flows.get('flw_1');
      expect(flow).toEqual({ id: 'flw_1' });
      expect(flow.lastResponse.attempts).toBe(3);
      expect(api.requests).toHaveLength(3);
      // 500 ms then 1 s, each scaled by the jitter factor 0.5 + random / 2 = 0.75.
      expect(sleeps).toEqual([375, 750]);
    });

    it('sends the same Idempotency-Key on every attempt of a call, and a new one for the next call', async () => {
      api.replies({ status: 500, body: errorBody('internal_error') }, 'destroy', { status: 201, body: { consent_record: { record_id: 'rec_us1' } } });
      const c = client({ maxRetries: 2 });
      const params = { flow_id: 'flw_1', subject: { email: 'a@example.com' }, decisions: {}, captured_at: '2026-01-01T00:00:00Z' };
      const created = await c.consentRecords.create(params);
      const keys = api.requests.map((request) => request.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(UUID);
      expect(created.lastResponse.idempotencyKey).toBe(keys[0]);
      // The body is the same on every attempt too, so the service sees one request.
      expect(new Set(api.requests.map((request) => request.body)).size).toBe(1);

      api.reset();
      await c.consentRecords.create(params);
      expect(api.requests[0].headers['idempotency-key']).not.toBe(keys[0]);
    });

    it('uses the caller’s idempotency key on every attempt', async () => {
      api.replies({ status: 502, body: errorBody('internal_error') }, { status: 200, body: { status: 'fulfilled' } });
      await client().decisions.exchange('dts_us1', { exchange_token: 'tok' }, { idempotencyKey: 'order-42-exchange' });
      expect(api.requests.map((request) => request.headers['idempotency-key'])).toEqual(['order-42-exchange', 'order-42-exchange']);
    });

    it('honours Retry-After in seconds on a 429', async () => {
      api.replies({ status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '3' } }, { status: 200, body: {} });
      await client({ random: () => 0 }).flows.get('flw_1');
      expect(sleeps).toEqual([3000]);
      expect(api.requests).toHaveLength(2);
    });

    it('honours Retry-After as an HTTP date, and on a 503', async () => {
      const inFiveSeconds = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5000).toUTCString();
      api.replies({ status: 503, body: errorBody('service_unavailable'), headers: { 'retry-after': inFiveSeconds } }, { status: 200, body: {} });
      await client({ random: () => 0 }).flows.get('flw_1');
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThan(3000);
      expect(sleeps[0]).toBeLessThanOrEqual(6000);
    });

    it('waits the backoff when it is longer than Retry-After', async () => {
      api.replies(
        { status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '1' } },
        { status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '1' } },
        { status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '1' } },
        { status: 200, body: {} },
      );
      await client({ maxRetries: 3, random: () => 0.999999, initialRetryDelay: 600 }).flows.get('flw_1');
      expect(sleeps).toEqual([1000, 1200, 2400]);
    });

    it('does not wait for a Retry-After longer than maxRetryAfter: it raises at once', async () => {
      api.always({ status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '3600' } });
      const error = await errorOf(client().flows.get('flw_1'));
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfter).toBe(3600);
      expect(api.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it.each([400, 401, 403, 404, 409, 410, 421, 422])('never retries a %i', async (status) => {
      api.always({ status, body: errorBody('x') });
      let fetches = 0;
      const counting: ServiceClientOptions['fetch'] = (url, init) => {
        fetches += 1;
        return globalThis.fetch(url, init);
      };
      await errorOf(client({ maxRetries: 5, fetch: counting }).consentRecords.create({ flow_id: 'flw_1', subject: { email: 'a@example.com' }, decisions: {}, captured_at: 'now' }));
      expect(fetches).toBe(1);
      expect(sleeps).toEqual([]);
      // Node's fetch itself repeats a 421 once on a new connection, as the Fetch standard says (same
      // key, same body: the service answers the kept 421 again); every other status is sent once.
      expect(api.requests).toHaveLength(status === 421 ? 2 : 1);
    });

    it('gives up after maxRetries with the last error; a call can change maxRetries', async () => {
      api.always({ status: 500, body: errorBody('internal_error') });
      const error = await errorOf(client({ maxRetries: 2 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(APIError);
      expect(api.requests).toHaveLength(3);

      api.reset();
      api.always({ status: 500, body: errorBody('internal_error') });
      await errorOf(client({ maxRetries: 2 }).flows.get('flw_1', {}, { maxRetries: 0 }));
      expect(api.requests).toHaveLength(1);
    });

    it('retries a dropped connection and raises ServiceConnectionError when it keeps failing', async () => {
      api.always('destroy');
      const error = await errorOf(client({ maxRetries: 1 }).webhooks.test('tp_dev_1', 'whk_1'));
      expect(error).toBeInstanceOf(ServiceConnectionError);
      expect(error).toMatchObject({ code: 'connection_error', statusCode: undefined });
      expect(api.requests).toHaveLength(2);
      expect(new Set(api.requests.map((request) => request.headers['idempotency-key'])).size).toBe(1);
    });

    it('retries a refused connection', async () => {
      const port = await closedPort();
      const error = await errorOf(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(ServiceConnectionError);
      expect(error.message).toContain(`127.0.0.1:${port}`);
      expect(sleeps).toHaveLength(2);
    });

    it('verify, which uses the consent token up, retries only what provably did nothing', async () => {
      api.always({ status: 503, body: errorBody('service_unavailable') });
      await expect(client({ maxRetries: 3 }).decisions.verify('dts_us1', { consent_token: 't' })).rejects.toBeInstanceOf(APIError);
      expect(api.requests).toHaveLength(1);

      api.reset();
      api.always('destroy');
      await expect(client({ maxRetries: 3 }).decisions.verify('dts_us1', { consent_token: 't' })).rejects.toBeInstanceOf(ServiceConnectionError);
      expect(api.requests).toHaveLength(1);

      api.reset();
      api.replies({ status: 429, body: errorBody('rate_limited'), headers: { 'retry-after': '1' } }, { status: 200, body: { valid: true, status: 'fulfilled' } });
      await expect(client().decisions.verify('dts_us1', { consent_token: 't' })).resolves.toEqual({ valid: true, status: 'fulfilled' });
      expect(api.requests).toHaveLength(2);

      const port = await closedPort();
      sleeps = [];
      await expect(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2 }).decisions.verify('dts_us1', { consent_token: 't' })).rejects.toBeInstanceOf(ServiceConnectionError);
      expect(sleeps).toHaveLength(2);
    });
  });

  describe('timeouts and cancellation', () => {
    it('times out an attempt that gets no answer, and retries it with the same key', async () => {
      api.replies('hang', { status: 200, body: { status: 'fulfilled' } });
      const started = Date.now();
      const answer = await client({ timeout: 150 }).decisions.exchange('dts_us1', { exchange_token: 't' });
      expect(answer.lastResponse.attempts).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(api.requests[0].headers['idempotency-key']).toBe(api.requests[1].headers['idempotency-key']);
    });

    it('raises ServiceTimeoutError when every attempt times out; a call can set its own timeout', async () => {
      api.always('hang');
      const error = await errorOf(client({ timeout: 10_000, maxRetries: 1 }).flows.get('flw_1', {}, { timeout: 100 }));
      expect(error).toBeInstanceOf(ServiceTimeoutError);
      expect(error).toBeInstanceOf(ServiceConnectionError);
      expect(error).toMatchObject({ code: 'timeout', timeoutMs: 100 });
      expect(api.requests).toHaveLength(2);
    });

    it('times out a body that stops arriving', async () => {
      api.always('hang-body');
      const error = await errorOf(client({ timeout: 150, maxRetries: 0 }).flows.get('flw_1'));
      expect(error).toBeInstanceOf(ServiceTimeoutError);
    });

    it('stops at once when the caller aborts, also between retries', async () => {
      const controller = new AbortController();
      api.always({ status: 503, body: errorBody('service_unavailable') });
      const c = client({
        sleep: async (ms) => {
          sleeps.push(ms);
          controller.abort(new Error('shutting down'));
          throw controller.signal.reason;
        },
      });
      await expect(c.flows.get('flw_1', {}, { signal: controller.signal })).rejects.toThrow('shutting down');
      expect(api.requests).toHaveLength(1);

      api.reset();
      api.always('hang');
      const during = new AbortController();
      setTimeout(() => during.abort(new Error('user went away')), 50);
      await expect(client({ timeout: 10_000 }).flows.get('flw_1', {}, { signal: during.signal })).rejects.toThrow('user went away');
      expect(api.requests).toHaveLength(1);
    });

    it('really waits between retries by default (no sleep injected)', async () => {
      api.replies({ status: 503, body: errorBody('service_unavailable') }, { status: 200, body: {} });
      const c = new ServiceClient({ apiKey: API_TOKEN, baseUrl: api.url, initialRetryDelay: 100, random: () => 0 });
      const started = Date.now();
      await c.flows.get('flw_1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    });
  });

  describe('configuration', () => {
    it('refuses what cannot work', () => {
      expect(() => new ServiceClient({ apiKey: '', baseUrl: api.url })).toThrow(/API token/);
      expect(() => new ServiceClient({ apiKey: 'pk_test_abc', baseUrl: api.url })).toThrow(/publishable key/);
      expect(() => new ServiceClient({ apiKey: API_TOKEN, baseUrl: 'us.example.com' })).toThrow(/absolute URL/);
      expect(() => new ServiceClient({ apiKey: API_TOKEN, baseUrl: 'ftp://us.example.com' })).toThrow(/http/);
      expect(() => new ServiceClient({ apiKey: API_TOKEN, baseUrl: api.url, maxRetries: -1 })).toThrow(RangeError);
      expect(() => new ServiceClient({ apiKey: API_TOKEN, baseUrl: api.url, timeout: 0 })).toThrow(RangeError);
    });

    it('refuses to run in a browser, where an API token must never be', () => {
      const global = globalThis as { document?: unknown };
      global.document = {};
      try {
        expect(() => new ServiceClient({ apiKey: API_TOKEN, baseUrl: api.url })).toThrow(/never reach a browser/);
      } finally {
        delete global.document;
      }
    });

    it('uses a fetch the caller provides', async () => {
      const seen: string[] = [];
      const c = new ServiceClient({
        apiKey: API_TOKEN,
        baseUrl: 'https://us.decisions.example.com',
        fetch: async (url, init) => {
          seen.push(`${init.method} ${url} ${init.headers.authorization}`);
          return new Response(JSON.stringify({ valid: false, status: 'expired' }), { status: 200, headers: { 'content-type': 'application/json' } });
        },
      });
      await expect(c.decisions.verify('dts_us1', { consent_token: 'x' })).resolves.toEqual({ valid: false, status: 'expired' });
      expect(seen).toEqual([`GET https://us.decisions.example.com/api/v1/decisions/dts_us1/verify?consent_token=x Bearer ${API_TOKEN}`]);
    });

    it('states the version of package.json', () => {
      const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
      expect(SDK_VERSION).toBe(manifest.version);
    });
  });

  describe('paginate', () => {
    it('walks every page by cursor', async () => {
      const pages: Record<string, FakeReply> = {
        first: { status: 200, body: { data: [{ id: 'whk_1' }, { id: 'whk_2' }], next_cursor: 'c1' } },
        c1: { status: 200, body: { data: [{ id: 'whk_3' }], next_cursor: null } },
      };
      api.replies(pages.first, pages.c1);
      const c = client();
      const ids: string[] = [];
      for await (const hook of paginate((cursor) => c.webhooks.list('tp_dev_1', { cursor, limit: 2 }))) ids.push(hook.id);
      expect(ids).toEqual(['whk_1', 'whk_2', 'whk_3']);
      expect(api.requests.map((request) => request.query.get('cursor'))).toEqual([null, 'c1']);
    });

    it("walks an import report's rows by cursor", async () => {
      const head = { import_id: 'imp_us1', flow_id: 'flw_1', dry_run: false, status: 'completed', summary: { recorded: 3, refused: 0 }, created_at: '2026-01-01T00:00:00.000Z' };
      api.replies(
        { status: 200, body: { ...head, rows: [{ index: 0, outcome: 'recorded' }, { index: 1, outcome: 'recorded' }], next_cursor: 'r1' } },
        { status: 200, body: { ...head, rows: [{ index: 2, outcome: 'recorded' }], next_cursor: null } },
      );
      const indexes: number[] = [];
      for await (const row of client().imports.rows('imp_us1', { limit: 2 })) indexes.push(row.index);
      expect(indexes).toEqual([0, 1, 2]);
      expect(api.requests.map((request) => [request.query.get('limit'), request.query.get('cursor')])).toEqual([['2', null], ['2', 'r1']]);
    });
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
