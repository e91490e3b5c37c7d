import { Client } from 'pg';
import { signPreviewToken } from '@dcr/domain';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

jest.setTimeout(60000);

const PREVIEW_KEY = Buffer.alloc(32, 11);

/**
 * Preview templates end to end on a country pair: a template is a handle on one flow version (draft
 * or active), created under the flow, read and deleted with the API token of its application; its
 * preview link is a signed ten-minute URL on the flow host whose page shows that version's decision
 * page without a session, a cookie or anything recorded.
 */
describe('preview templates', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  let db: Client;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let otherToken: string;
  let flowId: string;

  const api = (method: string, path: string, body?: unknown, token = apiToken, country = us) => http(country.url, method, path, { token, body });
  const page = (url: string) => fetch(url).then(async (response) => ({ status: response.status, headers: response.headers, text: await response.text() }));
  const count = async (table: string) => Number((await db.query(`SELECT count(*)::int AS n FROM "decisions"."${table}"`)).rows[0].n);
  /** Events the decisions service has emitted: counted on the audit trail once the outbox (which deletes what it relays) is empty. */
  const eventsEmitted = async () => {
    await eventually(async () => (await count('outbox')) === 0);
    return Number((await db.query(`SELECT count(*)::int AS n FROM audit_chain.entries WHERE source = 'decisions'`)).rows[0].n);
  };

  async function createTemplate(body?: unknown): Promise<{ id: string; flow_id: string; flow_version: number; created_at: string }> {
    const created = await api('POST', `/api/v1/flows/${flowId}/templates`, body);
    expect(created.status).toBe(201);
    return created.body;
  }

  async function previewUrl(templateId: string, body: unknown = {}): Promise<string> {
    const preview = await api('POST', `/api/v1/templates/${templateId}/preview`, body);
    expect(preview.status).toBe(200);
    return preview.body.preview_url;
  }

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, env: { TEMPLATE_PREVIEW_KEY: PREVIEW_KEY.toString('base64') } });
    ({ us, de } = countries);
    db = new Client({ connectionString: us.database.url });
    await db.connect();
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    // Another organisation: another application in a new account, with its own token.
    ({ apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' }));
    // Version 1 active ("Stay in touch"), version 2 a pending draft ("Hear from us").
    flowId = (await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, title: 'Stay in touch' })).body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    expect((await api('POST', `/api/v1/flows/${flowId}/versions`, { title: 'Hear from us' })).status).toBe(201);
  });

  afterAll(async () => {
    await db?.end();
    await countries?.close();
  });

  it('creates a template of the newest version (the draft) or of a given one, reads it and deletes it', async () => {
    const newest = await createTemplate();
    expect(newest).toEqual({ id: expect.stringMatching(/^tpl_us[0-9a-z]{20}$/), flow_id: flowId, flow_version: 2, created_at: expect.any(String) });
    expect(Math.abs(Date.parse(newest.created_at) - Date.now())).toBeLessThan(60000);
    const active = await createTemplate({ flow_version: 1 });
    expect(active).toMatchObject({ flow_id: flowId, flow_version: 1 });
    expect(active.id).not.toBe(newest.id);

    const read = await api('GET', `/api/v1/templates/${newest.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(newest);

    expect((await api('DELETE', `/api/v1/templates/${newest.id}`)).status).toBe(204);
    const gone = await api('GET', `/api/v1/templates/${newest.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: 'Template was not found', code: 'not_found', request_id: expect.any(String) });
    expect((await api('DELETE', `/api/v1/templates/${newest.id}`)).status).toBe(404);
    expect((await api('GET', `/api/v1/templates/${active.id}`)).body).toEqual(active);
    expect((await api('GET', '/api/v1/templates/tpl_welcome')).status).toBe(404);
  });

  it('refuses a version the flow does not have, and a bad body, naming flow_version', async () => {
    const missing = await api('POST', `/api/v1/flows/${flowId}/templates`, { flow_version: 9 });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'flow_version', reason: expect.stringContaining('has no version 9') }] });
    for (const bad of [{ flow_version: 0 }, { flow_version: 1.5 }, { flow_version: '1' }]) {
      const refused = await api('POST', `/api/v1/flows/${flowId}/templates`, bad);
      expect(refused.status).toBe(422);
      expect(refused.body.details.map((d: { field: string }) => d.field)).toEqual(['flow_version']);
    }
    const unknown = await api('POST', `/api/v1/flows/${flowId}/templates`, { version: 1 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.details).toEqual([{ field: 'version', reason: expect.stringContaining('should not exist') }]);
    expect((await api('POST', `/api/v1/flows/${flowId}/templates`, [1])).status).toBe(400);
    expect((await api('POST', '/api/v1/flows/flw_dev_0123456789abcdef/templates')).status).toBe(404);
    expect((await api('POST', `/api/v1/templates/${(await createTemplate()).id}/preview`, { device: 'tablet' })).body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'device', reason: expect.any(String) }],
    });
  });

  it("answers another organisation's token 404 on the flow and on every template route", async () => {
    const template = await createTemplate();
    expect((await api('POST', `/api/v1/flows/${flowId}/templates`, {}, otherToken)).body).toMatchObject({ code: 'not_found', message: 'Flow was not found' });
    for (const [method, path] of [
      ['GET', `/api/v1/templates/${template.id}`],
      ['POST', `/api/v1/templates/${template.id}/preview`],
      ['DELETE', `/api/v1/templates/${template.id}`],
    ]) {
      const refused = await api(method, path, method === 'POST' ? {} : undefined, otherToken);
      expect([method, refused.status, refused.body.message]).toEqual([method, 404, 'Template was not found']);
    }
    expect((await api('GET', `/api/v1/templates/${template.id}`)).status).toBe(200);
  });

  it('answers a template of another country 421 with its home country, and nothing else', async () => {
    const template = await createTemplate();
    for (const [method, path] of [
      ['GET', `/api/v1/templates/${template.id}`],
      ['POST', `/api/v1/templates/${template.id}/preview`],
      ['DELETE', `/api/v1/templates/${template.id}`],
    ]) {
      const misdirected = await api(method, path, method === 'POST' ? {} : undefined, apiToken, de);
      expect([method, misdirected.status, misdirected.body]).toEqual([
        method,
        421,
        { message: expect.any(String), code: 'wrong_country', home_country: 'US', request_id: expect.any(String) },
      ]);
    }
  });

  it('gives a signed ten-minute link on the flow host whose page shows the version without a session, a cookie or a record', async () => {
    const template = await createTemplate();
    const sessionsBefore = await count('decision_sessions');
    const eventsBefore = await eventsEmitted();
    const asked = Date.now();
    const preview = await api('POST', `/api/v1/templates/${template.id}/preview`, { device: 'mobile', theme: 'dark' });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ preview_url: `${us.url}/preview/${template.id}.md.${Date.parse(preview.body.expires_at) / 1000}.${preview.body.preview_url.slice(-43)}`, expires_at: expect.any(String) });
    expect(preview.body.preview_url).toMatch(/\/preview\/tpl_us[0-9a-z]{20}\.md\.\d{10}\.[A-Za-z0-9_-]{43}$/);
    expect(Math.abs(Date.parse(preview.body.expires_at) - (asked + 600_000))).toBeLessThan(5000);

    const shown = await page(preview.body.preview_url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(shown.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
    );
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer');
    expect(shown.headers.get('set-cookie')).toBeNull();
    // The draft (version 2) as a person would see it, in the device and theme asked for.
    expect(shown.text).toMatch(/<html lang="en" dir="ltr" data-theme="dark" data-device="mobile">/);
    expect(shown.text).toContain('Preview – nothing is recorded');
    expect(shown.text).toContain('<h1 id="decision-title">Hear from us</h1>');
    expect(shown.text).toContain('Acme asks for your consent.');
    expect(shown.text).toContain('<fieldset id="preview-controls" class="hp-preview-controls" disabled>');
    expect(shown.text).toMatch(/<input type="checkbox" id="purpose-newsletter" name="purposes" value="newsletter"/);
    expect(shown.text).not.toMatch(/<script\b/);

    // The link's query parameters override; a bad one is named.
    const light = await page(`${preview.body.preview_url}?device=desktop&theme=light`);
    expect(light.text).toMatch(/data-theme="light" data-device="desktop"/);
    const bad = await page(`${preview.body.preview_url}?theme=sepia`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('theme: must be light or dark');

    // The active version's template shows version 1; in German when the browser asks for it.
    const activeUrl = await previewUrl((await createTemplate({ flow_version: 1 })).id);
    const german = await fetch(activeUrl, { headers: { 'accept-language': 'de-DE' } }).then((r) => r.text());
    // The flow's own wording keeps its language inside the German page.
    expect(german).toContain('<h1 id="decision-title" lang="en">Stay in touch</h1>');
    expect(german).toContain('Vorschau – es wird nichts gespeichert');
    expect(german).toMatch(/data-theme="light" data-device="desktop"/);

    expect(await count('decision_sessions')).toBe(sessionsBefore);
    expect(await eventsEmitted()).toBe(eventsBefore);
  });

  it('answers an expired link 410 and a forged one, or one whose template was deleted, 404, each with a page that says so', async () => {
    const template = await createTemplate();
    const url = await previewUrl(template.id);
    const base = url.split('/preview/')[0];
    const resign = (key: Buffer, minutesAgo: number) =>
      signPreviewToken({ template_id: template.id, device: 'desktop', theme: 'light' }, new Uint8Array(key), new Date(Date.now() - minutesAgo * 60_000)).token;

    // Links signed with the country's configured key: fine while fresh, 410 once the ten minutes are over.
    expect((await page(`${base}/preview/${resign(PREVIEW_KEY, 1)}`)).status).toBe(200);
    const expired = await page(`${base}/preview/${resign(PREVIEW_KEY, 11)}`);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain('This preview has expired');
    expect(expired.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");

    const forged = await page(`${base}/preview/${resign(Buffer.alloc(32, 12), 0)}`);
    expect(forged.status).toBe(404);
    expect(forged.text).toContain('Preview not found');
    expect((await page(`${base}/preview/not-a-token`)).status).toBe(404);
    // Another country's gateway holds another key.
    expect((await page(url.replace(us.url, de.url))).status).toBe(404);

    expect((await page(url)).status).toBe(200);
    expect((await api('DELETE', `/api/v1/templates/${template.id}`)).status).toBe(204);
    const deleted = await page(url);
    expect(deleted.status).toBe(404);
    expect(deleted.text).toContain('This preview link is not valid, or its template was deleted.');
  });

  it('documents the routes in the OpenAPI document', async () => {
    const openapi = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(Object.keys(openapi.paths['/api/v1/flows/{flow_id}/templates'])).toEqual(['post']);
    expect(Object.keys(openapi.paths['/api/v1/templates/{template_id}']).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(openapi.paths['/api/v1/templates/{template_id}/preview'].post.responses)).toEqual(expect.arrayContaining(['200', '404', '421', '422']));
    expect(Object.keys(openapi.paths['/api/v1/templates/{template_id}/preview'].post.responses)).not.toContain('501');
    expect(Object.keys(openapi.paths['/preview/{token}'].get.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '410']));
  });
});
