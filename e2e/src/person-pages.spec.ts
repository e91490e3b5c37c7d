import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

jest.setTimeout(60000);

/**
 * What a person meets on the pages (the inbox and its records, the hosted decision and flow pages)
 * and on the inbox's JSON API, when a request is odd: a form holding a prototype key, a query
 * parameter without a name, an inbox token taken to the other country. Two countries (US, DE) on the
 * in-process bus, real PostgreSQL.
 */
describe('person-facing pages and the inbox API: odd requests', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, env: { NODE_ENV: 'development' } });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
  });

  afterAll(async () => {
    await countries?.close();
  });

  const mailbox = async (country: RunningCountry, email: string) => (await http(country.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`)).body.data as Array<{ text: string }>;

  /** An inbox token of `country` for `email`, through the JSON API. */
  async function inboxToken(country: RunningCountry, email: string): Promise<string> {
    expect((await http(country.url, 'POST', '/api/v1/inbox/sign_in', { body: { email } })).status).toBe(200);
    let code = '';
    await eventually(async () => {
      const mail = await mailbox(country, email);
      code = mail.length > 0 ? /\b(\d{6})\b/.exec(mail[0].text)![1] : '';
      return code !== '';
    });
    const opened = await http(country.url, 'POST', '/api/v1/inbox/session', { body: { email, code } });
    expect(opened.status).toBe(201);
    return opened.body.inbox_token;
  }

  /** A form as the page's own would post it (same origin). */
  const postForm = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${us.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: us.url, 'sec-fetch-site': 'same-origin', ...headers },
      body,
    });

  describe('a form holding a prototype key', () => {
    const reason = 'is a prototype key (__proto__, or constructor holding prototype): not accepted';

    it('is refused on the pages with 400 and a readable page naming the field, before anything is done', async () => {
      for (const [body, field] of [
        ['email=proto-page%40example.com&__proto__=x', '__proto__'],
        ['email=proto-page%40example.com&constructor%5Bprototype%5D=x', 'constructor[prototype]'],
      ]) {
        const answer = await postForm('/inbox/sign_in', body, { 'accept-language': 'de' });
        const text = await answer.text();
        expect([body, answer.status, answer.headers.get('content-type')]).toEqual([body, 400, 'text/html; charset=utf-8']);
        expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
        expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
        expect(text).toMatch(/^<!DOCTYPE html>/);
        expect(text).toContain('<html lang="de"');
        expect(text).toContain('data-status="400"');
        expect(text).toContain(`<code>${field}</code>`);
        expect(text).toContain(reason);
        expect(text).toContain(answer.headers.get('x-request-id')!);
        expect(text).not.toContain('"code":');
      }
      // Nothing was mailed: the form was refused before the page read it.
      expect(await mailbox(us, 'proto-page@example.com')).toEqual([]);
      // The other forms of the pages alike.
      const session = await postForm('/inbox/session', 'email=a%40example.com&code=123456&__proto__=1');
      expect([session.status, session.headers.get('content-type'), session.headers.get('set-cookie')]).toEqual([400, 'text/html; charset=utf-8', null]);
      const withdraw = await postForm(`/inbox/records/rec_us${'0'.repeat(20)}/withdraw`, 'purpose=newsletter&constructor[prototype]=1');
      expect([withdraw.status, withdraw.headers.get('content-type')]).toEqual([400, 'text/html; charset=utf-8']);
      expect(await withdraw.text()).toContain('<code>constructor[prototype]</code>');
    });

    it('is refused on the API with 400 naming the field, as a JSON body with such a key is', async () => {
      const form = await http(us.url, 'POST', '/api/v1/inbox/sign_in', { rawBody: 'email=proto-api%40example.com&__proto__=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect([form.status, form.body]).toEqual([
        400,
        {
          message: 'The request body holds a prototype key (__proto__, or constructor holding prototype): such keys are not accepted',
          code: 'invalid_request',
          details: [{ field: '__proto__', reason }],
          request_id: expect.any(String),
        },
      ]);
      const nested = await http(us.url, 'POST', '/api/v1/decisions', { token: apiToken, rawBody: 'kind=consent&constructor[prototype][x]=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect([nested.status, nested.body.details]).toEqual([400, [{ field: 'constructor[prototype][x]', reason }]]);
      expect(await mailbox(us, 'proto-api@example.com')).toEqual([]);
    });
  });

  describe('a query parameter with an empty name (`?=x`, `?&=x`)', () => {
    const empty = { field: '', reason: 'a query parameter has an empty name (`=value` with nothing before the `=`)' };

    it('is a 400 on the API saying so, on routes with and without a query DTO', async () => {
      const token = await inboxToken(us, 'empty-name@example.com');
      for (const [path, credential] of [
        ['/api/v1/me?=x', apiToken],
        [`/api/v1/applications/${applicationId}/flows?&=x`, apiToken],
        ['/api/v1/inbox?=', token],
        ['/api/v1/inbox/records?limit=5&=x', token],
      ]) {
        const answer = await http(us.url, 'GET', path, { token: credential });
        expect([path, answer.status, answer.body]).toEqual([path, 400, { message: 'Invalid query parameters', code: 'invalid_request', details: [empty], request_id: expect.any(String) }]);
      }
    });

    it('is taken harmlessly by the pages, as tracking parameters are; a filter of the inbox page with a bad value is a 400 page naming it', async () => {
      const flow = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/flows`, { token: apiToken, body: { ...NEWSLETTER_FLOW, name: 'Empty names' } });
      expect((await http(us.url, 'POST', `/api/v1/flows/${flow.body.id}/activate`, { token: apiToken })).status).toBe(200);
      const session = (await http(us.url, 'POST', '/api/v1/decisions', { token: apiToken, body: { kind: 'consent', flow_id: flow.body.id, delivery_mode: 'direct' } })).body;
      const cookie = `service_inbox=${await inboxToken(us, 'empty-name-page@example.com')}`;
      for (const [path, headers, status] of [
        ['/inbox?=x', {}, 200],
        ['/inbox?&=x', { cookie }, 200],
        ['/inbox?=x&utm_source=newsletter&sort=newest', { cookie }, 200],
        ['/inbox/records?=x', { cookie }, 200],
        [`/decisions/${session.session_token}?=x`, {}, 200],
        [`/decisions/${session.session_token}/embed?&=x`, {}, 200],
        [`/accord/${flow.body.id}?=x`, {}, 200],
      ] as const) {
        const answer = await fetch(`${us.url}${path}`, { headers, redirect: 'manual' });
        expect([path, answer.status, answer.headers.get('content-type')]).toEqual([path, status, 'text/html; charset=utf-8']);
      }
      // Signed in, the inbox itself (its list and filters), not the sign-in form.
      const signedIn = await (await fetch(`${us.url}/inbox?=x&utm_source=newsletter`, { headers: { cookie } })).text();
      expect([signedIn.includes('id="inbox-list"') || signedIn.includes('id="inbox-empty"'), signedIn.includes('id="inbox-sign-in"')]).toEqual([true, false]);
      const bad = await fetch(`${us.url}/inbox?kind=everything&=x`, { headers: { cookie } });
      expect([bad.status, bad.headers.get('content-type')]).toEqual([400, 'text/html; charset=utf-8']);
      const text = await bad.text();
      expect(text).toContain('<code>kind</code>');
      expect(text).not.toContain('<code></code>');
      // The records page of one organisation: an application_id that names none is refused, never read
      // as every organisation's records (it showed them all).
      for (const query of ['application_id=tp_dev_nope', 'application_id=', 'application_id=x%20y', `application_id=${applicationId}&application_id=${applicationId}`]) {
        const refused = await fetch(`${us.url}/inbox/records?${query}`, { headers: { cookie } });
        expect([query, refused.status]).toEqual([query, 400]);
        expect(await refused.text()).toContain('<code>application_id</code>');
      }
      expect((await fetch(`${us.url}/inbox/records?application_id=${applicationId}`, { headers: { cookie } })).status).toBe(200);
    });
  });

  describe('an inbox token at the other country', () => {
    it('is answered 421 wrong_country with its home country and nothing else, on every inbox route; at home it opens the inbox', async () => {
      const token = await inboxToken(de, 'homed-in-de@example.com');
      expect(token).toMatch(/^inb_de[A-Za-z0-9_-]{43}$/);
      expect((await http(de.url, 'GET', '/api/v1/inbox', { token })).status).toBe(200);
      const wrongDoor = { message: expect.any(String), code: 'wrong_country', home_country: 'DE', request_id: expect.any(String) };
      for (const [method, path, body] of [
        ['GET', '/api/v1/inbox', undefined],
        ['GET', '/api/v1/inbox/records', undefined],
        ['POST', `/api/v1/inbox/records/rec_us${'0'.repeat(20)}/withdraw`, {}],
        ['POST', `/api/v1/inbox/records/rec_de${'0'.repeat(20)}/withdraw`, {}],
        ['DELETE', '/api/v1/inbox/session', undefined],
      ] as const) {
        const answer = await http(us.url, method, path, { token, body });
        expect([method, path, answer.status, answer.body]).toEqual([method, path, 421, wrongDoor]);
      }
      // The 421 signed nothing out: the token still opens its inbox at home.
      expect((await http(de.url, 'GET', '/api/v1/inbox', { token })).status).toBe(200);
      // A US token works in the US; a token naming a country that is no peer, or none (the form
      // before tokens named their country), opens nothing here: 401, as before.
      const home = await inboxToken(us, 'homed-in-us@example.com');
      expect(home).toMatch(/^inb_us[A-Za-z0-9_-]{43}$/);
      expect((await http(us.url, 'GET', '/api/v1/inbox', { token: home })).status).toBe(200);
      for (const stranger of [`inb_fr${home.slice(6)}`, `inb_${home.slice(6)}`]) {
        expect([stranger, (await http(us.url, 'GET', '/api/v1/inbox', { token: stranger })).body.code]).toEqual([stranger, 'unauthenticated']);
      }
    });
  });
});
