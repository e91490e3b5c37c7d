import { InProcessBus } from '@dcr/transport';
import { activeFlowApplication, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * What an integrator reading only the published documents (docs/api.md, the contract, the OpenAPI
 * document) relies on for consent collected in the organisation's own forms: the OpenAPI document
 * states the Idempotency-Key every mutating POST takes and the limits the routes enforce, and the
 * service answers as the documents say.
 */
describe('consent in your own forms, as documented', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let publishableKey: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let openapi: any;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const granted = { decision: 'granted', default_checked: false, mandatory: false };
  const declined = { decision: 'declined', default_checked: false, mandatory: false };

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, NEWSLETTER_FLOW));
    publishableKey = (await api('POST', `/api/v1/applications/${applicationId}/publishable_keys`, {})).body.key;
    expect((await api('POST', `/api/v1/applications/${applicationId}/allowed_origins`, { allowed_origin: { origin: 'http://localhost' } })).status).toBe(201);
    openapi = (await http(us.url, 'GET', '/.well-known/openapi')).body;
  });

  afterAll(async () => {
    await us?.close();
  });

  it('documents the Idempotency-Key header, and its 409, on the mutating POSTs that take it', async () => {
    for (const path of ['/api/v1/consent_records', '/api/v1/consent_records/imports', '/api/v1/captures', '/api/v1/decisions/{capture_token}/authorize', '/api/v1/applications/{application_id}/form_connections']) {
      const operation = openapi.paths[path].post;
      const header = (operation.parameters ?? []).find((parameter: { in: string; name: string }) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
      expect([path, header?.required, header?.schema]).toEqual([path, false, { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' }]);
      expect([path, operation.responses['409']?.description]).toEqual([path, expect.stringContaining('idempotency_conflict')]);
    }
    // The inbox's trade of a code for a token keeps no answer (docs/api.md, Idempotency): no header documented there.
    expect((openapi.paths['/api/v1/inbox/session'].post.parameters ?? []).map((parameter: { name: string }) => parameter.name)).not.toContain('Idempotency-Key');

    // What the document says is what the route does: a repeat with another body is that 409.
    const rows = (email: string) => ({ flow_id: flowId, dry_run: true, records: [{ subject: { email }, decisions: { newsletter: { decision: 'granted' }, analytics: { decision: 'declined' } }, captured_at: '2025-01-01T00:00:00Z' }] });
    const headers = { 'idempotency-key': 'import-doc-1' };
    expect((await http(us.url, 'POST', '/api/v1/consent_records/imports', { token: apiToken, body: rows('a@example.com'), headers })).status).toBe(200);
    const conflict = await http(us.url, 'POST', '/api/v1/consent_records/imports', { token: apiToken, body: rows('b@example.com'), headers });
    expect([conflict.status, conflict.body.code]).toEqual([409, 'idempotency_conflict']);
  });

  it('states the limits the Record API and imports enforce, and integers as integers', async () => {
    const schemas = openapi.components.schemas;
    expect(schemas.ImportConsentRecordsDto.properties.records).toMatchObject({ minItems: 1, maxItems: 10000 });
    for (const dto of ['CreateConsentRecordDto', 'ImportRowDto']) {
      expect([dto, schemas[dto].properties.idempotency_key]).toEqual([dto, expect.objectContaining({ type: 'string', minLength: 1, maxLength: 200 })]);
    }
    expect(schemas.CreateConsentRecordDto.properties.flow_version.type).toBe('integer');
    expect(schemas.ConsentRecordDto.properties.flow_version.type).toBe('integer');
    expect(schemas.ImportRowOutcomeDto.properties.index.type).toBe('integer');
    expect(schemas.ImportRowOutcomeDto.properties.flow_version.type).toBe('integer');
    expect([schemas.ImportSummaryDto.properties.recorded.type, schemas.ImportSummaryDto.properties.refused.type]).toEqual(['integer', 'integer']);

    // The limit stated is the one enforced: 201 characters are refused, 200 taken.
    const body = (key: string) => ({ flow_id: flowId, subject: { email: 'limits@example.com' }, decisions: { newsletter: granted, analytics: declined }, captured_at: new Date().toISOString(), idempotency_key: key });
    expect((await api('POST', '/api/v1/consent_records', body('k'.repeat(201)))).body.details).toEqual([{ field: 'idempotency_key', reason: expect.any(String) }]);
    expect((await api('POST', '/api/v1/consent_records', body('k'.repeat(200)))).status).toBe(201);
  });

  it("gives the browser commit's 421 an example that is a wrong_country answer", () => {
    const schema = openapi.components.schemas.BrowserCommitWrongCountryDto;
    expect([schema.properties.code.example, schema.properties.home_country.example]).toEqual(['wrong_country', 'DE']);
    expect(schema.required).toEqual(expect.arrayContaining(['message', 'code', 'request_id', 'home_country']));
  });

  it('names every malformed field of a record in one 422, a decision that is not granted or declined included', async () => {
    const refused = await api('POST', '/api/v1/consent_records', {
      flow_id: flowId,
      subject: { email: 'shape@example.com' },
      decisions: { newsletter: { decision: 'yes', default_checked: false, mandatory: false }, analytics: declined },
      captured_at: '2026-11-20',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['captured_at', 'decisions.newsletter']);
  });

  it('commits a capture again for the same person whose external id is sent with the spaces a record does not keep', async () => {
    const capture = await http(us.url, 'POST', '/api/v1/captures', {
      headers: { 'x-publishable-key': publishableKey, origin: 'http://localhost' },
      body: { flow_id: flowId, channel: 'form_capture', decisions: { newsletter: granted, analytics: declined } },
    });
    expect(capture.status).toBe(201);
    const authorize = (subject: Record<string, string>) => api('POST', `/api/v1/decisions/${capture.body.capture_token}/authorize`, { subject, suppress_receipt: true });
    const first = await authorize({ email: 'fay@example.com', external_id: 'crm-fay' });
    expect(first.status).toBe(200);
    // The same person: the address compared lower-cased, the external id without the spaces around it (docs/api.md).
    for (const subject of [{ email: 'Fay@Example.com', external_id: 'crm-fay' }, { email: 'fay@example.com', external_id: ' crm-fay ' }]) {
      const again = await authorize(subject);
      expect([again.status, again.body.record_id]).toEqual([200, first.body.record_id]);
    }
    const other = await authorize({ email: 'fay@example.com', external_id: 'crm-other' });
    expect([other.status, other.body.code]).toEqual([409, 'conflict']);
  });
  it('refuses a body sent to a route that takes none, naming its fields, and does nothing then', async () => {
    const draft = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Activated without a body' });
    expect(draft.status).toBe(201);
    const activate = (body: unknown) => api('POST', `/api/v1/flows/${draft.body.id}/activate`, body);
    const refused = await activate({ x: 1, activate_at: '2030-01-01T00:00:00Z' });
    expect([refused.status, refused.body.code, refused.body.details?.map((d: { field: string }) => d.field)]).toEqual([422, 'validation_failed', ['x', 'activate_at']]);
    expect([(await activate([1])).status, (await activate([1])).body.details]).toEqual([422, [{ field: 'body', reason: 'this route takes no request body' }]]);
    expect((await api('GET', `/api/v1/flows/${draft.body.id}`)).body.status).toBe('draft');
    // An empty body, or none, is a body it does not read; also one labelled JSON that is empty (what many clients send).
    const emptyJson = (path: string) => fetch(`${us.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' }, body: '' });
    const needsBody = await emptyJson(`/api/v1/applications/${applicationId}/flows`);
    expect([needsBody.status, ((await needsBody.json()) as { details?: Array<{ field: string }> }).details?.map((d) => d.field)]).toEqual([400, ['body']]);
    expect((await emptyJson(`/api/v1/flows/${draft.body.id}/activate`)).status).toBe(200);
    expect((await api('GET', `/api/v1/flows/${draft.body.id}`)).body.status).toBe('active');
  });

  it('refuses a query parameter given twice that the route takes once as "must be given once", naming it, and takes a list parameter repeated', async () => {
    const recorded = await api('POST', '/api/v1/consent_records', {
      flow_id: flowId,
      subject: { email: 'twice@example.com' },
      decisions: { newsletter: granted, analytics: declined },
      captured_at: new Date().toISOString(),
    });
    expect(recorded.status).toBe(201);
    const recordId: string = recorded.body.consent_record.record_id;
    const given = async (path: string) => {
      const answer = await api('GET', path);
      return [path, answer.status, answer.body.code, answer.body.details];
    };
    const once = (field: string) => [{ field, reason: 'must be given once' }];
    // They were "flavor must be one of canonical, dpv, signed" and "limit must be a string".
    for (const [path, field] of [
      [`/api/v1/consent_receipts/${recordId}?flavor=canonical&flavor=dpv`, 'flavor'],
      [`/api/v1/applications/${applicationId}/flows?limit=1&limit=2`, 'limit'],
      [`/api/v1/applications/${applicationId}/audit?limit=1&limit=2`, 'limit'],
      [`/api/v1/applications/${applicationId}/webhooks?cursor=a&cursor=b`, 'cursor'],
      [`/api/v1/flows/${flowId}?version=1&version=2`, 'version'],
    ]) {
      expect(await given(path)).toEqual([path, 400, 'invalid_request', once(field)]);
    }
    // As consent_status words it.
    const status = `/api/v1/applications/${applicationId}/consent_status?subject%5Bemail%5D=a%40example.com&subject%5Bemail%5D=b%40example.com`;
    expect(await given(status)).toEqual([status, 400, 'invalid_request', once('subject[email]')]);
    // Beside the query's other problems, in one answer.
    const both = `/api/v1/applications/${applicationId}/flows?limit=1&limit=2&colour=red`;
    expect(await given(both)).toEqual([both, 400, 'invalid_request', [...once('limit'), { field: 'colour', reason: 'property colour should not exist' }]]);
    // The audit's `type` is a list: repeated, it is taken.
    expect((await api('GET', `/api/v1/applications/${applicationId}/audit?type=consent.granted&type=flow.activated`)).status).toBe(200);
  });

  it('lists 503 service_unavailable, with the error body, on every operation that changes something and every read of the API', () => {
    // Each of them reaches the bus (a service that does not answer) or the gateway's database (the
    // Idempotency-Key's claim, its own tables): a lost connection or a missing responder is a 503.
    // Not a read documented as not implemented (501), which reaches neither.
    const schemas = openapi.components.schemas;
    const missing = Object.entries(openapi.paths as Record<string, Record<string, { responses?: Record<string, { description?: string; content?: Record<string, { schema?: { $ref?: string } }> }> }>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method, operation]) => ['post', 'put', 'patch', 'delete'].includes(method) || (method === 'get' && path.startsWith('/api/v1/') && !operation.responses?.['501']))
          .filter(([, operation]) => {
            const unavailable = operation.responses?.['503'];
            const ref = unavailable?.content?.['application/json']?.schema?.$ref ?? '';
            const schema = schemas[ref.replace('#/components/schemas/', '')];
            const errorBody = schema !== undefined && ['message', 'code', 'request_id'].every((name) => schema.required?.includes(name) && schema.properties?.[name]);
            return !(errorBody && unavailable?.description?.includes('service_unavailable'));
          })
          .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(missing).toEqual([]);
    expect(openapi.paths['/api/v1/applications/{application_id}/flows'].get.responses['503'].description).toEqual(expect.stringContaining('service_unavailable'));
    expect(openapi.paths['/api/v1/authorization_receipts/{id}'].get.responses['503']).toBeUndefined();
    // A route's own 503 is kept, beside the general one.
    expect(openapi.paths['/api/v1/decisions/{capture_token}/authorize'].post.responses['503'].description).toEqual(expect.stringContaining('Another country is committing the capture'));
    expect(openapi.paths['/api/v1/consent_records/imports'].post.responses['503'].content['application/json'].schema.$ref).toBe('#/components/schemas/ImportStoppedErrorDto');
  });
});
