import { Client } from 'pg';
import { InProcessBus } from '@dcr/transport';
import { http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * The public inbox sign-in mails a code to whatever address it is given. Each address gets at most 5
 * codes an hour; SIGN_IN_CODES_PER_IP_PER_HOUR keeps one client from mailing codes to address after
 * address (here 3 an hour), on the API and on the page alike, counted per client address as the
 * gateway reads it (a trusted proxy's X-Forwarded-For: the test's loopback peer is one).
 */
describe('inbox sign-in codes per client address', () => {
  let us: RunningCountry;
  let db: Client;

  beforeAll(async () => {
    us = await startCountry({
      country: 'US',
      peers: [],
      transport: 'inprocess',
      bus: new InProcessBus(),
      subjectRefKey: randomSecret(),
      adminToken: randomSecret(),
      env: { SIGN_IN_CODES_PER_IP_PER_HOUR: '3' },
    });
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await us?.close();
  });

  const mailsTo = async (address: string) => (await db.query(`SELECT count(*)::int AS n FROM decisions.dev_mailbox WHERE to_address = $1`, [address])).rows[0].n;
  const from = (address: string) => ({ 'x-forwarded-for': address });

  it('mails no more codes to new addresses than the limit allows one client, on the API and the page, and counts each client apart', async () => {
    const client = from('203.0.113.7');
    for (let i = 0; i < 3; i++) {
      const asked = await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: `victim-${i}@example.com` }, headers: client });
      expect([i, asked.status]).toEqual([i, 200]);
    }
    const refused = await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: 'victim-3@example.com' }, headers: client });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(expect.objectContaining({ code: 'rate_limited', message: expect.stringContaining('network address') }));
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await mailsTo('victim-3@example.com')).toBe(0);

    // The page's sign-in form, from the same client: refused as well, the address kept in the form, nothing mailed.
    const page = await fetch(`${us.url}/inbox/sign_in`, {
      method: 'POST',
      headers: { ...client, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', origin: us.url },
      body: new URLSearchParams({ email: 'victim-4@example.com' }).toString(),
      redirect: 'manual',
    });
    expect(page.status).toBe(429);
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const text = await page.text();
    expect(text).toContain('too many sign-in codes were asked for from your network');
    expect(text).toContain('value="victim-4@example.com"');
    expect(await mailsTo('victim-4@example.com')).toBe(0);

    // Another client is not held back by the first.
    const other = await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: 'someone@example.com' }, headers: from('198.51.100.20') });
    expect(other.status).toBe(200);
    expect(await mailsTo('someone@example.com')).toBe(1);
  });
});
