import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

describe('per-application rate limits', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();

  beforeAll(async () => {
    us = await startCountry({
      country: 'US',
      peers: [],
      transport: 'inprocess',
      bus: new InProcessBus(),
      subjectRefKey: randomSecret(),
      adminToken,
      env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' },
    });
  });

  afterAll(async () => {
    await us?.close();
  });

  it('refuses the request past the burst with 429, Retry-After and RateLimit headers, per application', async () => {
    const { apiToken: first } = await applicationWithToken(us, adminToken, { name: 'first', environment: 'sandbox' });
    const { apiToken: second } = await applicationWithToken(us, adminToken, { name: 'second', environment: 'sandbox' });

    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push(await http(us.url, 'GET', '/api/v1/me', { token: first }));
    expect(allowed.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(allowed[0].headers.get('ratelimit-policy')).toMatch(/^"default";q=3;w=\d+$/);
    expect(allowed[0].headers.get('ratelimit')).toMatch(/^"default";r=2;t=\d+$/);

    const refused = await http(us.url, 'GET', '/api/v1/me', { token: first });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', request_id: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);

    // Another application of the same gateway has its own bucket.
    expect((await http(us.url, 'GET', '/api/v1/me', { token: second })).status).toBe(200);
  });
  it('limits the public form-builder hook per sending address, before any lookup', async () => {
    const unknown = `/hooks/typeform/fcn_us${'0'.repeat(20)}`;
    const answers = [];
    // A signature of Typeform's form (one that is not is refused before the lookup: 401), for a connection there is not.
    const signature = `sha256=${'A'.repeat(43)}=`;
    for (let i = 0; i < 4; i++) answers.push(await http(us.url, 'POST', unknown, { body: { event_type: 'form_response' }, headers: { 'typeform-signature': signature } }));
    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 429]);
    // The next second's bucket: a signature not of Typeform's form is 401 without a lookup, the unknown connection unread.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const malformed = await http(us.url, 'POST', unknown, { body: { event_type: 'form_response' }, headers: { 'typeform-signature': 'sha256=x' } });
    expect([malformed.status, malformed.body.message]).toEqual([401, expect.stringMatching(/not in Typeform's form/)]);
    expect(answers[3].body).toMatchObject({ code: 'rate_limited' });
  });
});
