import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { Client } from 'pg';
import { subjectReference } from '@dcr/domain';
import { FLOWS_SNAPSHOT, FlowsSnapshotReply, GATEWAY_APPLICATION_IDENTITY } from '@dcr/contracts';
import { lastValueFrom } from 'rxjs';
import { allPages, countryClient, CountryPair, directoryHomes, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';

/**
 * US and DE on the embedded default (in-process transport), each on its own database: the
 * Connect basics, the error contract, CORS, and residency across the border.
 */
describe('two countries on the in-process transport', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  const subjectRefKey = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let publishableKey: string;

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, subjectRefKey });
    ({ us, de } = countries);

    const app = await http(us.url, 'POST', '/api/v1/applications', {
      token: adminToken,
      body: { name: 'Acme', environment: 'sandbox' },
    });
    expect(app.status).toBe(201);
    applicationId = app.body.id;
    const token = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, {
      token: adminToken,
      body: { name: 'server' },
    });
    expect(token.status).toBe(201);
    apiToken = token.body.token;
    const key = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken });
    expect(key.status).toBe(201);
    publishableKey = key.body.key;
    const origin = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, {
      token: adminToken,
      body: { allowed_origin: { origin: 'http://localhost' } },
    });
    expect(origin.status).toBe(201);
  });

  afterAll(async () => {
    await countries?.close();
  });

  describe('operations endpoints', () => {
    it('answers healthz and readyz', async () => {
      expect((await http(us.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      const ready = await http(us.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', transport: 'ok' } });
    });

    it('exposes Prometheus metrics labelled with the country', async () => {
      await http(us.url, 'GET', '/api/v1/me', { token: apiToken });
      const metrics = await http(us.url, 'GET', '/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toContain('text/plain');
      expect(metrics.body).toMatch(/http_requests_total\{[^}]*route="\/api\/v1\/me"[^}]*status="200"[^}]*country="US"[^}]*\} \d+/);
    });

    it('counts each answer once, under its route, and requests no route matched as unmatched', async () => {
      const count = async (method: string, route: string, status: number) => {
        const text = (await http(us.url, 'GET', '/metrics')).body as string;
        const line = text
          .split('\n')
          .find((l) => l.startsWith('http_requests_total{') && l.includes(`method="${method}"`) && l.includes(`route="${route}"`) && l.includes(`status="${status}"`));
        return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
      };
      const meBefore = await count('GET', '/api/v1/me', 401);
      const unmatched401Before = await count('GET', 'unmatched', 401);
      expect((await http(us.url, 'GET', '/api/v1/me')).status).toBe(401);
      expect(await count('GET', '/api/v1/me', 401)).toBe(meBefore + 1);
      expect(await count('GET', 'unmatched', 401)).toBe(unmatched401Before); // not counted a second time
      const unmatchedBefore = await count('GET', 'unmatched', 404);
      expect((await http(us.url, 'GET', '/api/v1/no-such-route')).status).toBe(404);
      expect(await count('GET', 'unmatched', 404)).toBe(unmatchedBefore + 1);
      expect(await count('GET', '/api/v1/no-such-route', 404)).toBe(0);
    });

    it('logs one JSON line per request carrying the request id', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me', { token: apiToken, headers: { 'x-request-id': 'trace-me-12345' } });
      expect(response.headers.get('x-request-id')).toBe('trace-me-12345');
      await eventually(async () => us.logs.lines.some((l) => l.request_id === 'trace-me-12345'));
      const line = us.logs.lines.find((l) => l.request_id === 'trace-me-12345')!;
      expect(line).toMatchObject({ service: 'gateway', country: 'US', status: 200, route: '/api/v1/me', msg: 'request completed' });
    });

    it('keeps personal data and tokens in query strings out of the access log', async () => {
      await http(us.url, 'GET', '/api/v1/me?limit=5&subject%5Bemail%5D=grace.hopper%40example.com&consent_token=secret-value', {
        token: apiToken,
        headers: { 'x-request-id': 'trace-query-1' },
      });
      await eventually(async () => us.logs.lines.some((l) => l.request_id === 'trace-query-1'));
      const line = us.logs.lines.find((l) => l.request_id === 'trace-query-1')!;
      expect(line.url).toBe('/api/v1/me?limit=5&subject%5Bemail%5D=…&consent_token=…');
      expect(JSON.stringify(us.logs.lines)).not.toContain('grace.hopper');
    });
  });

  describe('errors', () => {
    it('answers an unknown route with 404 in the error shape', async () => {
      const response = await http(us.url, 'GET', '/api/v1/nothing-here', { token: apiToken });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'No such route', code: 'route_not_found', request_id: expect.stringMatching(/^req_/) });
    });

    it('answers what is refused before a route runs in the error shape too, with a request id', async () => {
      // Raw HTTP: a client library would refuse to send most of these.
      const raw = (request: string) =>
        new Promise<{ status: number; headers: string; body: any }>((resolve, reject) => {
          const { hostname, port } = new URL(us.url);
          const socket = connect(Number(port), hostname, () => socket.write(request));
          let text = '';
          socket.on('data', (chunk) => (text += chunk.toString('utf8')));
          socket.on('error', reject);
          socket.on('close', () => {
            const [head, body] = text.split('\r\n\r\n');
            resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) });
          });
        });
      const shape = { message: expect.any(String), code: expect.any(String), request_id: expect.stringMatching(/^req_/) };
      const badPath = await raw(`GET /api/v1/applications/%E0%A4%A HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiToken}\r\nConnection: close\r\n\r\n`);
      expect(badPath.status).toBe(400);
      expect(badPath.body).toEqual({ ...shape, code: 'invalid_request', details: [{ field: 'path', reason: 'malformed percent-encoding' }] });
      expect(badPath.headers).toContain(`x-request-id: ${badPath.body.request_id.toLowerCase()}`);
      const badMethod = await raw('FOO /api/v1/me HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(badMethod.status).toBe(400);
      expect(badMethod.body).toEqual({ ...shape, code: 'invalid_request' });
      expect(badMethod.headers).toContain(`x-request-id: ${badMethod.body.request_id.toLowerCase()}`);
      const hugeHeader = await raw(`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(hugeHeader.status).toBe(431);
      expect(hugeHeader.body).toEqual({ ...shape, code: 'request_header_too_large' });
    });

    it('answers malformed JSON with 400', async () => {
      const response = await http(us.url, 'POST', '/api/v1/applications', { token: apiToken, rawBody: '{"name": ' });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'malformed_json', request_id: expect.any(String), details: [{ field: 'body', reason: 'is not valid JSON' }] });
    });

    it('refuses a JSON body holding a prototype key with 400 naming where, not as malformed JSON', async () => {
      const reason = 'is a prototype key (__proto__, or constructor holding prototype): not accepted';
      const proto = await http(us.url, 'POST', '/api/v1/decisions', {
        token: apiToken,
        rawBody: '{"flow_id":"flw_x","subject":{"email":"ada@example.com","__proto__":{"admin":true}}}',
      });
      expect([proto.status, proto.body.code, proto.body.details]).toEqual([400, 'invalid_request', [{ field: 'subject.__proto__', reason }]]);
      const constructor = await http(us.url, 'POST', '/api/v1/applications', {
        token: apiToken,
        rawBody: '{"name":"x","constructor":{"prototype":{"admin":true}}}',
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect([constructor.status, constructor.body.code, constructor.body.details]).toEqual([400, 'invalid_request', [{ field: 'constructor.prototype', reason }]]);
      // A constructor key without prototype is an ordinary (here unknown) field; JSON with a BOM is still JSON.
      const plain = await http(us.url, 'POST', '/api/v1/applications', { token: apiToken, rawBody: '\uFEFF{"name":"x","environment":"sandbox","constructor":"y"}' });
      expect([plain.status, plain.body.details]).toEqual([422, [{ field: 'constructor', reason: 'property constructor should not exist' }]]);
      const empty = await http(us.url, 'POST', '/api/v1/applications', { token: apiToken, rawBody: '', headers: { 'content-type': 'application/json' } });
      // An empty body labelled JSON is no body: this route takes one, so it must be a JSON object.
      expect([empty.status, empty.body.code, empty.body.details?.[0]?.field]).toEqual([400, 'invalid_request', 'body']);
    });

    it('answers a body over 1 MiB with 413', async () => {
      const response = await http(us.url, 'POST', '/api/v1/applications', {
        token: apiToken,
        rawBody: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), environment: 'sandbox' }),
      });
      expect(response.status).toBe(413);
      expect(response.body.code).toBe('payload_too_large');
    });

    it('answers a body that breaks its DTO with 422 naming the fields', async () => {
      const response = await http(us.url, 'POST', '/api/v1/applications', {
        token: apiToken,
        body: { name: '', environment: 'staging', colour: 'red' },
      });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('validation_failed');
      const fields = response.body.details.map((d: { field: string }) => d.field).sort();
      expect(fields).toEqual(['colour', 'environment', 'name']);
    });

    it('answers a JSON body that is not an object with 400', async () => {
      const response = await http(us.url, 'POST', '/api/v1/applications', { token: apiToken, rawBody: '[1,2]' });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('invalid_request');
      // Named like any other bad part of a request (it had no details).
      expect(response.body.details).toEqual([{ field: 'body', reason: 'must be a JSON object' }]);
    });

    it('answers bad paging parameters with 400 naming the parameter', async () => {
      const response = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens?limit=500`, { token: apiToken });
      expect(response.status).toBe(400);
      expect(response.body.details).toEqual([expect.objectContaining({ field: 'limit' })]);
    });
  });

  describe('authentication', () => {
    it('refuses a request without credentials', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me');
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('unauthenticated');
    });

    it('refuses an unknown API token', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me', { token: 'not-a-real-token-value-at-all' });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('unauthenticated');
    });

    it.each([
      ['an AI agent token', { authorization: 'Bearer ra_agent_abcdef0123456789' }],
      ['an OAuth access token', { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }],
      ['a delegation grant', { 'x-delegation-grant-id': 'dlg_dev_0123456789abcdef' }],
    ])('says %s is not accepted yet', async (_what, headers) => {
      const response = await http(us.url, 'GET', '/api/v1/me', { headers });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('credential_not_accepted');
      expect(response.body.message).toMatch(/not accepted yet/);
    });

    it('answers /me with the identity of an API token, in both countries', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me', { token: apiToken });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toMatchObject({
        application_id: applicationId,
        application: { id: applicationId, name: 'Acme', environment: 'sandbox' },
        credential: { kind: 'api_token', id: expect.stringMatching(/^api_token_/), scopes: expect.arrayContaining(['audit:verify', 'disclosures:write']) },
        country: 'US',
      });
      await eventually(async () => (await http(de.url, 'GET', '/api/v1/me', { token: apiToken })).status === 200);
      expect((await http(de.url, 'GET', '/api/v1/me', { token: apiToken })).body.country).toBe('DE');
    });

    it('lets a publishable key do nothing but sessions and captures', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me', { headers: { 'x-publishable-key': publishableKey } });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('forbidden');
    });

    it('refuses a token lacking the scope a route needs', async () => {
      const narrow = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, {
        token: apiToken,
        body: { scopes: ['audit:verify'] },
      });
      expect(narrow.status).toBe(201);
      const response = await http(us.url, 'POST', '/api/v1/applications', {
        token: narrow.body.token,
        body: { name: 'Other', environment: 'sandbox' },
      });
      expect(response.status).toBe(403);
      expect(response.body.message).toContain('applications:write');
    });
  });

  describe('applications and credentials', () => {
    it('lets an API token create an application in its own account', async () => {
      const response = await http(us.url, 'POST', '/api/v1/applications', {
        token: apiToken,
        body: { name: 'Acme live', environment: 'production' },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ id: expect.stringMatching(/^tp_dev_[0-9a-z]{16}$/), environment: 'production' });
      const key = await http(us.url, 'POST', `/api/v1/applications/${response.body.id}/publishable_keys`, { token: apiToken });
      expect(key.body.key).toMatch(/^pk_live_/);
      const listed = await http(us.url, 'GET', '/api/v1/applications', { token: apiToken });
      expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining([applicationId, response.body.id]));
    });

    it('hides applications of other accounts', async () => {
      const other = await http(us.url, 'POST', '/api/v1/applications', {
        token: adminToken,
        body: { name: 'Someone else', environment: 'sandbox' },
      });
      const response = await http(us.url, 'GET', `/api/v1/applications/${other.body.id}`, { token: apiToken });
      expect(response.status).toBe(404);
      const tokens = await http(us.url, 'GET', `/api/v1/applications/${other.body.id}/api_tokens`, { token: apiToken });
      expect(tokens.status).toBe(404);
    });

    it('stores API tokens and publishable keys only as hashes', async () => {
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        const tokens = await client.query('SELECT * FROM gateway.api_tokens');
        const keys = await client.query('SELECT * FROM gateway.publishable_keys');
        const everything = JSON.stringify([tokens.rows, keys.rows]);
        expect(everything).not.toContain(apiToken);
        expect(everything).not.toContain(publishableKey);
        const sha = (v: string) => createHash('sha256').update(v).digest('hex');
        expect(tokens.rows.map((r) => r.token_hash)).toContain(sha(apiToken));
        expect(keys.rows.map((r) => r.key_hash)).toContain(sha(publishableKey));
      } finally {
        await client.end();
      }
    });

    it('lists token records without values, with their last use', async () => {
      await http(us.url, 'GET', '/api/v1/me', { token: apiToken });
      await eventually(async () => {
        const list = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens`, { token: apiToken });
        return list.body.data.some((t: { last_used_at: string | null }) => t.last_used_at !== null);
      });
      const list = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens`, { token: apiToken });
      expect(list.body.next_cursor).toBeNull();
      for (const record of list.body.data) {
        expect(Object.keys(record).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'scopes']);
      }
    });

    it('pages lists with limit and cursor', async () => {
      const first = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens?limit=1`, { token: apiToken });
      expect(first.body.data).toHaveLength(1);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens?limit=1&cursor=${first.body.next_cursor}`, { token: apiToken });
      expect(second.body.data).toHaveLength(1);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);

      // Paging on while deleting: the origin a cursor was taken at is gone, the cursor still works.
      const originsPath = `/api/v1/applications/${applicationId}/allowed_origins`;
      for (const origin of ['https://p1.example', 'https://p2.example', 'https://p3.example']) {
        expect((await http(us.url, 'POST', originsPath, { token: apiToken, body: { allowed_origin: { origin } } })).status).toBe(201);
      }
      const all = (await http(us.url, 'GET', originsPath, { token: apiToken })).body.data.map((item: { origin: string }) => item.origin);
      const at = all.indexOf('https://p1.example');
      const upTo = await http(us.url, 'GET', `${originsPath}?limit=${at + 1}`, { token: apiToken });
      expect(upTo.body.data[at].origin).toBe('https://p1.example');
      expect((await http(us.url, 'DELETE', `${originsPath}/${encodeURIComponent('https://p1.example')}`, { token: apiToken })).status).toBe(204);
      const after = await http(us.url, 'GET', `${originsPath}?cursor=${upTo.body.next_cursor}`, { token: apiToken });
      expect(after.status).toBe(200);
      expect(after.body.data.map((item: { origin: string }) => item.origin)).toEqual(all.slice(at + 1));
      // A cursor of another list is still refused.
      const foreign = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/publishable_keys?cursor=${upTo.body.next_cursor}`, { token: apiToken });
      expect(foreign.status).toBe(400);
      expect(foreign.body.details[0].field).toBe('cursor');
      for (const origin of ['https://p2.example', 'https://p3.example']) {
        expect((await http(us.url, 'DELETE', `${originsPath}/${encodeURIComponent(origin)}`, { token: apiToken })).status).toBe(204);
      }
      // DE has every one of these changes before the next tests look at the application there.
      await eventually(async () => {
        const inDe = (await http(de.url, 'GET', originsPath, { token: apiToken })).body.data.map((item: { origin: string }) => item.origin);
        return JSON.stringify(inDe) === JSON.stringify(all.filter((origin: string) => !/p[123]\.example/.test(origin)));
      });
    });

    it('loses no token when two countries change one application at the same moment', async () => {
      const originsPath = `/api/v1/applications/${applicationId}/allowed_origins`;
      for (let round = 0; round < 3; round++) {
        const origin = `https://race${round}.example`;
        const [added, created] = await Promise.all([
          http(us.url, 'POST', originsPath, { token: apiToken, body: { allowed_origin: { origin } } }),
          http(de.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: apiToken, body: {} }),
        ]);
        expect([added.status, created.status]).toEqual([201, 201]);
        // The token made in DE works in both countries, and stays working once they have exchanged their states.
        await eventually(async () => (await http(us.url, 'GET', '/api/v1/me', { token: created.body.token })).status === 200);
        expect((await http(de.url, 'GET', '/api/v1/me', { token: created.body.token })).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 300));
        for (const country of [us, de]) expect([country.country, (await http(country.url, 'GET', '/api/v1/me', { token: created.body.token })).status]).toEqual([country.country, 200]);
        // And the origin added in US at the same moment is in both as well.
        await eventually(async () => (await http(de.url, 'GET', originsPath, { token: apiToken })).body.data.some((o: { origin: string }) => o.origin === origin));
        expect((await http(us.url, 'GET', originsPath, { token: apiToken })).body.data.map((o: { origin: string }) => o.origin)).toContain(origin);
        expect((await http(us.url, 'DELETE', `${originsPath}/${encodeURIComponent(origin)}`, { token: apiToken })).status).toBe(204);
        await eventually(async () => !(await http(de.url, 'GET', originsPath, { token: apiToken })).body.data.some((o: { origin: string }) => o.origin === origin));
      }
    });

    it('revokes a token everywhere', async () => {
      const created = await http(de.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: apiToken, body: {} });
      expect(created.status).toBe(201);
      await eventually(async () => (await http(us.url, 'GET', '/api/v1/me', { token: created.body.token })).status === 200);
      // Used on both sides first, so each gateway remembers the token's hash (RecentTokenHashes):
      // a remembered hash must not outlive the token.
      expect((await http(de.url, 'GET', '/api/v1/me', { token: created.body.token })).status).toBe(200);
      const revoked = await http(de.url, 'DELETE', `/api/v1/applications/${applicationId}/api_tokens/${created.body.id}`, { token: apiToken });
      expect(revoked.status).toBe(204);
      expect((await http(de.url, 'GET', '/api/v1/me', { token: created.body.token })).status).toBe(401);
      await eventually(async () => (await http(us.url, 'GET', '/api/v1/me', { token: created.body.token })).status === 401);
    });

    it('answers a credential change once every reachable country holds it: a new token works in the other country at once, a revoked one is refused there at once', async () => {
      const tokensPath = `/api/v1/applications/${applicationId}/api_tokens`;
      for (let round = 0; round < 8; round++) {
        const [made, other] = round % 2 === 0 ? [us, de] : [de, us];
        const created = await http(made.url, 'POST', tokensPath, { token: apiToken, body: { name: `at-once-${round}` } });
        expect(created.status).toBe(201);
        expect([round, other.country, (await http(other.url, 'GET', '/api/v1/me', { token: created.body.token })).status]).toEqual([round, other.country, 200]);
        expect((await http(made.url, 'DELETE', `${tokensPath}/${created.body.id}`, { token: apiToken })).status).toBe(204);
        expect([round, other.country, (await http(other.url, 'GET', '/api/v1/me', { token: created.body.token })).status]).toEqual([round, other.country, 401]);
      }
    });
  });

  describe('allowed origins', () => {
    it.each([
      ['a path', 'https://shop.example/path'],
      ['a trailing slash', 'https://shop.example/'],
      ['a query', 'https://shop.example?x=1'],
      ['http on another host', 'http://shop.example'],
    ])('refuses an origin with %s, naming the field', async (_what, origin) => {
      const response = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, {
        token: apiToken,
        body: { allowed_origin: { origin } },
      });
      expect(response.status).toBe(422);
      expect(response.body.details[0].field).toBe('allowed_origin.origin');
    });

    it('adds, lists and removes an origin (URL-encoded in the path)', async () => {
      const base = `/api/v1/applications/${applicationId}/allowed_origins`;
      const added = await http(us.url, 'POST', base, { token: apiToken, body: { allowed_origin: { origin: 'https://Shop.Example:443' } } });
      expect(added.status).toBe(201);
      expect(added.body.allowed_origin.origin).toBe('https://shop.example');
      const again = await http(us.url, 'POST', base, { token: apiToken, body: { allowed_origin: { origin: 'https://shop.example' } } });
      expect(again.status).toBe(200);
      const listed = await http(us.url, 'GET', base, { token: apiToken });
      expect(listed.body.data.map((o: { origin: string }) => o.origin)).toEqual(['http://localhost', 'https://shop.example']);
      const removed = await http(us.url, 'DELETE', `${base}/${encodeURIComponent('https://shop.example')}`, { token: apiToken });
      expect(removed.status).toBe(204);
      const missing = await http(us.url, 'DELETE', `${base}/${encodeURIComponent('https://shop.example')}`, { token: apiToken });
      expect(missing.status).toBe(404);
    });
  });

  describe('CORS', () => {
    const preflight = (origin: string) =>
      http(us.url, 'OPTIONS', '/api/v1/decisions', {
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-publishable-key, content-type' },
      });

    it('answers a preflight from a registered origin, on any port for a sandbox localhost', async () => {
      const response = await preflight('http://localhost:5173');
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(response.headers.get('access-control-allow-headers')).toContain('X-Publishable-Key');
      expect(response.headers.get('access-control-allow-headers')).not.toContain('Authorization');
    });

    it('denies a preflight from an unregistered origin and records cors.preflight_denied', async () => {
      const response = await preflight('https://evil.example');
      expect(response.status).toBe(403);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      await eventually(async () => {
        const activity = await http(us.url, 'GET', '/api/v1/activity?type=cors.preflight_denied', { token: adminToken });
        return activity.body.data.some((e: { detail: { origin: string } }) => e.detail.origin === 'https://evil.example');
      });
      const metrics = await http(us.url, 'GET', '/metrics');
      expect(metrics.body).toMatch(/cors_preflight_denied_total\{country="US"\} [1-9]/);
    });

    it('refuses a publishable-key call from an origin the application did not register', async () => {
      const response = await http(us.url, 'GET', '/api/v1/me', {
        headers: { 'x-publishable-key': publishableKey, origin: 'https://elsewhere.example' },
      });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('origin_not_allowed');
    });
  });

  describe('residency', () => {

    it('homes a person where first recorded and answers 421 with only the home country elsewhere', async () => {
      const created = await http(de.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, {
        token: apiToken,
        body: { external_id: 'crm-4711', email: 'ada@example.com' },
      });
      expect(created.status).toBe(201);
      // The id names its home country (newSubjectId), so no country keeps a directory entry for it.
      expect(created.body).toMatchObject({ id: expect.stringMatching(/^sub_de[0-9a-z]{18}$/), home_country: 'DE', external_id: 'crm-4711' });
      const subjectId = created.body.id;

      expect((await http(de.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${subjectId}`, { token: apiToken })).status).toBe(200);

      await eventually(async () => (await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${subjectId}`, { token: apiToken })).status === 421);
      const wrong = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${subjectId}`, { token: apiToken });
      expect(Object.keys(wrong.body).sort()).toEqual(['code', 'home_country', 'message', 'request_id']);
      expect(wrong.body).toMatchObject({ code: 'wrong_country', home_country: 'DE' });
      expect(JSON.stringify(wrong.body)).not.toMatch(/ada@example|crm-4711/);

      const byExternalId = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects?external_id=crm-4711`, { token: apiToken });
      expect(byExternalId.status).toBe(421);
      const recreate = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, {
        token: apiToken,
        body: { email: 'ADA@example.com' },
      });
      expect(recreate.status).toBe(421);
      expect(recreate.body.home_country).toBe('DE');

      const references = (['external_id', 'email', 'subject_id'] as const).map((kind) =>
        subjectReference(subjectRefKey, applicationId, kind, kind === 'subject_id' ? subjectId : kind === 'email' ? 'ada@example.com' : 'crm-4711'),
      );
      for (const country of [us, de]) {
        const entries = await directoryHomes(country, references);
        expect(entries).toEqual({ [references[0]]: 'DE', [references[1]]: 'DE' });
      }
    });

    it("answers for a person id made before ids named their country by its directory entry, which comes first", async () => {
      // Such an id is 20 random characters; these two read as a country's code by chance.
      const legacyDe = `sub_us${'0'.repeat(17)}1`;
      const legacyUs = `sub_de${'0'.repeat(17)}2`;
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO residency_router.directory_entries (reference, home_country, status, recorded_at) VALUES ($1, 'DE', 'active', now()), ($2, 'US', 'active', now())`,
          [subjectReference(subjectRefKey, applicationId, 'subject_id', legacyDe), subjectReference(subjectRefKey, applicationId, 'subject_id', legacyUs)],
        );
      } finally {
        await client.end();
      }
      const wrong = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${legacyDe}`, { token: apiToken });
      expect(wrong.status).toBe(421);
      expect(wrong.body.home_country).toBe('DE');
      // Homed here by its entry: asked for here (this country has no such person, so a plain 404), not sent to DE.
      const here = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${legacyUs}`, { token: apiToken });
      expect(here.status).toBe(404);
    });

    it("answers an id that names a peer 421 only when the peer has that person, and a plain 404 for anything unknown", async () => {
      // Unknown in the country it names: a plain 404 here as there (the contract's "an unknown resource is a plain 404").
      const namesDe = `sub_de${'a'.repeat(18)}`;
      const unknown = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${namesDe}`, { token: apiToken });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      expect((await http(de.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${namesDe}`, { token: apiToken })).status).toBe(404);
      expect((await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/sub_fr${'a'.repeat(18)}`, { token: apiToken })).status).toBe(404);
      // A person DE has, for another application: not this application's, so a 404 too.
      const other = await http(us.url, 'POST', '/api/v1/applications', { token: apiToken, body: { name: 'Other', environment: 'sandbox' } });
      await eventually(async () => (await http(de.url, 'GET', `/api/v1/applications/${other.body.id}`, { token: apiToken })).status === 200);
      const theirs = await http(de.url, 'POST', `/api/v1/applications/${other.body.id}/subjects`, { token: apiToken, body: { email: 'someone-else@example.com' } });
      expect(theirs.status).toBe(201);
      expect((await http(us.url, 'GET', `/api/v1/applications/${other.body.id}/subjects/${theirs.body.id}`, { token: apiToken })).status).toBe(421);
      expect((await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/${theirs.body.id}`, { token: apiToken })).status).toBe(404);
    });

    it('answers a plain 404 for an unknown resource whose id names the other country, of every kind', async () => {
      const z = (n: number) => '0'.repeat(n);
      const unknown: Array<[string, string, unknown?]> = [
        ['GET', `/api/v1/consent_receipts/rec_de${z(20)}`],
        ['GET', `/api/v1/consent_records/imports/imp_de${z(20)}`],
        ['GET', `/api/v1/decisions/dts_de${z(30)}`],
        ['POST', `/api/v1/decisions/cap_de${z(30)}/authorize`, { subject: { email: 'nobody@example.com' } }],
        ['GET', `/api/v1/applications/${applicationId}/form_connections/fcn_de${z(20)}`],
        ['POST', `/api/v1/templates/tpl_de${z(20)}/preview`, {}],
      ];
      for (const [method, path, body] of unknown) {
        const answer = await http(us.url, method, path, { token: apiToken, ...(body ? { body } : {}) });
        expect([path, answer.status, answer.body.code, answer.body.home_country]).toEqual([path, 404, 'not_found', undefined]);
      }
    });

    it('keeps personal data in the home country database only', async () => {
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        const subjects = await client.query('SELECT * FROM decisions.subjects');
        expect(JSON.stringify(subjects.rows)).not.toContain('ada@example.com');
        const directory = await client.query('SELECT * FROM residency_router.directory_entries');
        expect(directory.rows.length).toBeGreaterThan(0);
        expect(JSON.stringify(directory.rows)).not.toMatch(/ada@example|crm-4711/);
        // An opaque reference, a country, a status, times and counts (of its parties' reliances and releases).
        expect(Object.keys(directory.rows[0]).sort()).toEqual(['home_country', 'recorded_at', 'reference', 'releases', 'reliances', 'status', 'updated_at']);
      } finally {
        await client.end();
      }
    });

    it('answers 404 for a person no country knows', async () => {
      const response = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/subjects/sub_00000000000000000000`, { token: apiToken });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('not_found');
    });

    /**
     * A new person is homed (claimed here, confirmed with the peer) before their record is written.
     * When that write fails, the claims the batch made for people of whom nothing is stored are
     * released, here and at the peer, so the person is not kept homed in a country that holds
     * nothing of them. A claim another request relied on meanwhile, or of a person stored here, stays.
     */
    describe('after a write of new people fails', () => {
      let flowId: string;
      let usDb: Client;
      const decisions = { newsletter: { decision: 'granted', default_checked: false, mandatory: false } };
      const row = (email: string, extra: Record<string, unknown> = {}) => ({ subject: { email, ...extra }, decisions, captured_at: '2026-06-01T00:00:00Z' });
      const reference = (kind: 'email' | 'external_id', value: string) => subjectReference(subjectRefKey, applicationId, kind, value);
      const homeIn = async (country: RunningCountry, ref: string): Promise<string | undefined> => (await directoryHomes(country, [ref]))[ref];
      const record = (country: RunningCountry, email: string) => http(country.url, 'POST', '/api/v1/consent_records', { token: apiToken, body: { flow_id: flowId, ...row(email) } });
      const importRows = (records: unknown[]) => http(us.url, 'POST', '/api/v1/consent_records/imports', { token: apiToken, body: { flow_id: flowId, dry_run: false, records } });

      beforeAll(async () => {
        const flow = { name: 'Newsletter', pattern: 'standard', purposes: ['newsletter'], purpose_definitions: { newsletter: { label: 'Newsletter', basis: 'consent' } }, consent_duration: 'P1Y', policy_url: 'https://example.com/privacy' };
        flowId = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/flows`, { token: apiToken, body: flow })).body.id;
        expect((await http(us.url, 'POST', `/api/v1/flows/${flowId}/activate`, { token: apiToken })).status).toBe(200);
        await eventually(async () => (await http(de.url, 'GET', `/api/v1/flows/${flowId}`, { token: apiToken })).status === 200, 20_000);
        usDb = new Client({ connectionString: us.database.url });
        await usDb.connect();
        // The write of a person whose e-mail address starts with "fail" fails in US, after their claim.
        await usDb.query(`CREATE FUNCTION public.refuse_failing_people() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.email LIKE 'fail%' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
        await usDb.query('CREATE TRIGGER refuse_failing_people BEFORE INSERT ON decisions.subjects FOR EACH ROW EXECUTE FUNCTION public.refuse_failing_people()');
      }, 30_000);

      afterAll(async () => {
        await usDb?.query('DROP TRIGGER IF EXISTS refuse_failing_people ON decisions.subjects');
        await usDb?.end();
      });

      it('releases the claims of an import chunk that failed, here and at the peer, so the person is recorded in DE', async () => {
        expect((await importRows([row('half@x.com', { external_id: 'crm-half' }), row('fail-import@x.com')])).status).toBe(500);
        expect((await usDb.query("SELECT count(*)::int AS n FROM decisions.subjects WHERE email IN ('half@x.com', 'fail-import@x.com')")).rows[0].n).toBe(0);
        for (const ref of [reference('email', 'half@x.com'), reference('external_id', 'crm-half'), reference('email', 'fail-import@x.com')]) {
          expect(await homeIn(us, ref)).toBeUndefined();
          await eventually(async () => (await homeIn(de, ref)) === undefined);
        }
        const inDe = await record(de, 'half@x.com');
        expect([inDe.status, inDe.body.home_country]).toEqual([201, undefined]);
        expect(await homeIn(us, reference('email', 'half@x.com'))).toBe('DE');
      });

      it('releases the claim of a Record API call whose write failed', async () => {
        expect((await record(us, 'fail-record@x.com')).status).toBe(500);
        expect(await homeIn(us, reference('email', 'fail-record@x.com'))).toBeUndefined();
        await eventually(async () => (await homeIn(de, reference('email', 'fail-record@x.com'))) === undefined);
      });

      it('keeps the entry of a person whose data is stored here, and a claim another request relied on', async () => {
        // Stored here, their entry lost: the failed import's claim of them is not released.
        expect((await record(us, 'kept@x.com')).status).toBe(201);
        await usDb.query('DELETE FROM residency_router.directory_entries WHERE reference = $1', [reference('email', 'kept@x.com')]);
        expect((await importRows([row('kept@x.com', { external_id: 'crm-kept' }), row('fail-kept@x.com')])).status).toBe(500);
        expect(await homeIn(us, reference('email', 'kept@x.com'))).toBe('US');
        // Claimed by another request (untouched since); this one finds it homed here, relies on it, and fails.
        await usDb.query(`INSERT INTO residency_router.directory_entries (reference, home_country, status, recorded_at, updated_at) VALUES ($1, 'US', 'active', now(), now())`, [
          reference('email', 'fail-relied@x.com'),
        ]);
        expect((await record(us, 'fail-relied@x.com')).status).toBe(500);
        expect(await homeIn(us, reference('email', 'fail-relied@x.com'))).toBe('US');
      });
    });
  });

  describe('discovery', () => {
    it('serves an OpenAPI 3.1 document generated from the code', async () => {
      const response = await http(us.url, 'GET', '/.well-known/openapi');
      expect(response.status).toBe(200);
      expect(response.body.openapi).toBe('3.1.0');
      expect(Object.keys(response.body.paths)).toEqual(
        expect.arrayContaining(['/api/v1/me', '/api/v1/applications', '/api/v1/applications/{application_id}/allowed_origins']),
      );
      expect(response.body.servers[0].url).toBe(us.url);
      // Every reference names a schema the document defines.
      const defined = new Set(Object.keys(response.body.components?.schemas ?? {}));
      const references = [...JSON.stringify(response.body).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]);
      expect(references.length).toBeGreaterThan(0);
      expect([...new Set(references.filter((name) => !defined.has(name)))]).toEqual([]);
      // Each operation names the scopes its API token needs, as the gateway enforces them.
      const origins = response.body.paths['/api/v1/applications/{application_id}/allowed_origins'];
      expect(origins.post.security).toEqual([{ bearer: ['applications:write'] }]);
      expect(origins.post['x-required-scopes']).toEqual(['applications:write']);
      expect(origins.post.description).toContain('`applications:write`');
      expect(origins.get.security).toEqual([{ bearer: ['applications:read'] }]);
      expect(response.body.paths['/api/v1/me'].get.security).toEqual([{ bearer: [] }]);
      expect(response.body.components.securitySchemes.bearer.bearerFormat).toBe('opaque');
      // Every list's `limit` is the integer the gateway takes (1 to 200, default 50): a generated client sends a number.
      const limits = Object.entries(response.body.paths as Record<string, Record<string, { parameters?: { name: string; schema: unknown }[] }>>).flatMap(([path, item]) =>
        Object.values(item).flatMap((operation) => (operation.parameters ?? []).filter((p) => p.name === 'limit').map((p) => [path, p.schema])),
      );
      expect(limits.length).toBeGreaterThan(10);
      for (const [path, schema] of limits) expect([path, schema]).toEqual([path, { type: 'integer', minimum: 1, maximum: 200, default: 50 }]);
      // A GET reads no body (the gateway ignores one), so no GET answers 413; a body's size limit is listed where a body is read.
      const paths = Object.entries(response.body.paths as Record<string, Record<string, { responses?: Record<string, unknown>; requestBody?: unknown }>>);
      expect(paths.filter(([, item]) => item.get?.responses?.['413']).map(([path]) => path)).toEqual([]);
      expect(response.body.paths['/api/v1/consent_records'].post.responses['413']).toBeDefined();
      // The credential is each operation's security requirement, never a header parameter of its own
      // (OpenAPI ignores one named Authorization; the inbox routes read the header themselves).
      const authorizationParameters = paths.flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, operation]) =>
          ((operation as { parameters?: Array<{ in: string; name: string }> }).parameters ?? []).filter((p) => p.in === 'header' && p.name.toLowerCase() === 'authorization').map(() => `${method} ${path}`),
        ),
      );
      expect(authorizationParameters).toEqual([]);
      expect(response.body.paths['/api/v1/inbox/records'].get.security).toEqual([{ inbox_token: [] }]);
      // (fetch sends no body with a GET; node:http does.)
      const withBody = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${us.url}/api/v1/me`, { method: 'GET', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' } }, (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end('x'.repeat(2 * 1024 * 1024));
      });
      expect(withBody).toBe(200);
      const readOnly = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: apiToken, body: { scopes: ['applications:read'] } });
      const refused = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, {
        token: readOnly.body.token,
        body: { allowed_origin: { origin: 'https://scoped.example' } },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain(origins.post['x-required-scopes'][0]);
    });

    it('lets a token grant no more scopes than it holds: a token that may only write applications mints no token that reads webhooks', async () => {
      const mint = (token: string, body: unknown) => http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token, body });
      const writer = await mint(apiToken, { name: 'applications only', scopes: ['applications:write'] });
      expect([writer.status, writer.body.scopes]).toEqual([201, ['applications:write']]);
      const beyond = await mint(writer.body.token, { scopes: ['applications:write', 'webhooks:read'] });
      expect([beyond.status, beyond.body.code, beyond.body.details]).toEqual([403, 'forbidden', [{ field: 'scopes', reason: 'webhooks:read is not a scope of the token creating it' }]]);
      // Without scopes, the minted token holds what its maker holds, not every scope.
      const minted = await mint(writer.body.token, {});
      expect([minted.status, minted.body.scopes]).toEqual([201, ['applications:write']]);
      expect((await http(us.url, 'GET', `/api/v1/applications/${applicationId}/webhooks`, { token: minted.body.token })).status).toBe(403);
    });

    it('refuses, on every /api/v1 route, a query parameter the route does not take, naming it; pages and assets take any', async () => {
      const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
      const unknown = { field: 'utm_source', reason: 'property utm_source should not exist' };
      const answers: Array<[string, number, unknown]> = [];
      for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
        if (!path.startsWith('/api/v1/')) continue;
        for (const method of Object.keys(item).filter((name) => ['get', 'post', 'put', 'patch', 'delete'].includes(name))) {
          const url = `${path.replace(/\{[^}]+\}/g, 'x')}?utm_source=newsletter`;
          const response = await http(us.url, method.toUpperCase(), url, { token: apiToken, ...(method === 'get' || method === 'delete' ? {} : { body: {} }) });
          // A caller refused for its credential learns nothing more (the inbox routes take an inbox
          // token, the activity feed an admin token).
          if (response.status === 401 || response.status === 403) continue;
          const { request_id: _id, ...body } = response.body ?? {};
          answers.push([`${method.toUpperCase()} ${path}`, response.status, body]);
        }
      }
      expect(answers.length).toBeGreaterThan(60);
      // Named beside anything else wrong with the query (a route with a query DTO names all of it).
      const refusesIt = ([, status, body]: [string, number, any]) =>
        status === 400 && body.code === 'invalid_request' && body.message === 'Invalid query parameters' && body.details?.some((issue: unknown) => JSON.stringify(issue) === JSON.stringify(unknown));
      expect(answers.filter((answer) => !refusesIt(answer))).toEqual([]);
      // What a route takes is still taken, with or without the unknown one beside it.
      expect((await http(us.url, 'GET', `/api/v1/applications/${applicationId}/api_tokens?limit=1`, { token: apiToken })).status).toBe(200);
      expect((await http(us.url, 'GET', `/api/v1/applications/${applicationId}/consent_status?subject[external_id]=nobody`, { token: apiToken })).status).toBe(404);
      const misspelt = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/consent_status?subject[externalid]=nobody`, { token: apiToken });
      expect([misspelt.status, misspelt.body.details]).toEqual([400, [{ field: 'subject[externalid]', reason: 'property subject[externalid] should not exist' }]]);
      const me = await http(us.url, 'GET', '/api/v1/me?foo=1&limit=2', { token: apiToken });
      expect([me.status, me.body.details]).toEqual([
        400,
        [
          { field: 'foo', reason: 'property foo should not exist' },
          { field: 'limit', reason: 'property limit should not exist' },
        ],
      ]);
      for (const path of ['/healthz', '/.well-known/openapi', '/.well-known/api-catalog', '/sdk/v1/manifest.json', '/js/v1/manifest.json']) {
        expect([path, (await http(us.url, 'GET', `${path}?utm_source=newsletter&utm_medium=email`)).status]).toEqual([path, 200]);
      }
    });

    it('serves an RFC 9727 API catalog pointing at it', async () => {
      const response = await http(us.url, 'GET', '/.well-known/api-catalog');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/linkset+json');
      const entry = response.body.linkset.find((l: { anchor: string }) => l.anchor === `${us.url}/api/v1/`);
      expect(entry['service-desc'][0].href).toBe(`${us.url}/.well-known/openapi`);
    });
  });

  it("answers a peer's snapshot of flows too large for one message in parts, and lists them in pages that fit", async () => {
    // Twelve flows of 100 purposes with long descriptions: about 250 KB each, 3 MB in all.
    const keys = Array.from({ length: 100 }, (_, i) => `purpose_${String(i).padStart(3, '0')}`);
    const created: string[] = [];
    for (let n = 0; n < 12; n++) {
      const flow = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/flows`, {
        token: apiToken,
        body: {
          name: `Large ${n}`,
          pattern: 'standard',
          purposes: keys,
          purpose_definitions: Object.fromEntries(keys.map((key) => [key, { label: `Label ${key}`, description: 'D'.repeat(2000), basis: 'consent' }])),
        },
      });
      expect(flow.status).toBe(201);
      created.push(flow.body.id);
    }
    // What DE's decisions service asks US's every minute, part by part.
    const client = countryClient(us);
    const versions: FlowsSnapshotReply['versions'] = [];
    let after: string | undefined;
    let parts = 0;
    try {
      do {
        const part = await lastValueFrom(client.send<FlowsSnapshotReply>(FLOWS_SNAPSHOT, { from_country: 'DE', ...(after ? { after } : {}) }));
        versions.push(...part.versions);
        after = part.next_after;
        parts += 1;
      } while (after !== undefined);
    } finally {
      await client.close();
    }
    expect(parts).toBeGreaterThan(1);
    expect(versions.map((version) => version.id)).toEqual(expect.arrayContaining(created));
    expect(new Set(versions.map((version) => `${version.id}#${version.version}`)).size).toBe(versions.length);

    // The application's list of them: pages cut short of `limit` where one message would not hold
    // more, each naming the next, every flow once.
    const { ids: listed, pages } = await allPages(us.url, `/api/v1/applications/${applicationId}/flows?limit=200`, apiToken);
    expect(pages).toBeGreaterThan(1);
    expect(listed).toEqual(expect.arrayContaining(created));
    expect(new Set(listed).size).toBe(listed.length);
  }, 60000);

  it("answers the gateway's own bus handlers with the domain's errors: not_found for an unknown application, validation_failed naming the field", async () => {
    const client = countryClient(us);
    const failureOf = async (payload: unknown) => {
      try {
        await lastValueFrom(client.send(GATEWAY_APPLICATION_IDENTITY, payload));
        return undefined;
      } catch (error) {
        return error as { code: string; details?: Array<{ field: string }> };
      }
    };
    try {
      const known = await lastValueFrom(client.send<{ id: string }>(GATEWAY_APPLICATION_IDENTITY, { application_id: applicationId }));
      expect(known.id).toBe(applicationId);
      expect((await failureOf({ application_id: 'tp_dev_0000000000000000' }))?.code).toBe('not_found');
      const invalid = await failureOf({ wrong: 1 });
      expect(invalid?.code).toBe('validation_failed');
      expect(invalid?.details?.map((detail) => detail.field)).toContain('application_id');
    } finally {
      await client.close();
    }
  });
});
