import { Client } from 'pg';
import { InProcessBus } from '@dcr/transport';
import { applicationWithToken, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * What the API answers about a person (their address, their decisions, an inbox token shown once)
 * is kept by no cache on the way: every `/api/*` answer says `Cache-Control: no-store`, errors
 * included, unless its route says something else of its own.
 */
describe('answers holding personal data', () => {
  let us: RunningCountry;
  let db: Client;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const decision = (value: 'granted' | 'declined') => ({ decision: value, default_checked: false, mandatory: false });

  beforeAll(async () => {
    us = await startCountry({ country: 'US', peers: [], transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken });
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    flowId = (await api('POST', `/api/v1/applications/${applicationId}/flows`, NEWSLETTER_FLOW)).body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await us?.close();
  });

  it('says no-store on every answer of the Record API, the person and the inbox, errors included', async () => {
    const email = 'grace@example.com';
    const recorded = await api('POST', '/api/v1/consent_records', {
      flow_id: flowId,
      subject: { email, external_id: 'crm-1' },
      decisions: { newsletter: decision('granted'), analytics: decision('declined') },
      captured_at: '2026-11-20T10:00:00Z',
    });
    expect(recorded.status).toBe(201);
    const subjectId = recorded.body.consent_record.subject.id;
    const imported = await api('POST', '/api/v1/consent_records/imports', {
      flow_id: flowId,
      dry_run: false,
      records: [{ subject: { email: 'linus@example.com' }, decisions: { newsletter: { decision: 'granted' }, analytics: { decision: 'declined' } }, captured_at: '2026-01-01T00:00:00Z' }],
    });
    expect(imported.status).toBe(201);

    expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email } })).status).toBe(200);
    const mail = await db.query(`SELECT text FROM decisions.dev_mailbox WHERE to_address = $1 ORDER BY sent_at DESC LIMIT 1`, [email]);
    const code = /\b(\d{6})\b/.exec(mail.rows[0].text)![1];
    const session = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email, code } });
    expect(session.status).toBe(201);
    const inboxToken = session.body.inbox_token;

    const answers = {
      'POST consent_records': recorded,
      'GET consent_status': await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject%5Bemail%5D=${encodeURIComponent(email)}`),
      'GET subject': await api('GET', `/api/v1/applications/${applicationId}/subjects/${subjectId}`),
      'GET subject by e-mail': await api('GET', `/api/v1/applications/${applicationId}/subjects?email=${encodeURIComponent(email)}`),
      'POST import': imported,
      'GET import': await api('GET', `/api/v1/consent_records/imports/${imported.body.import_id}`),
      'POST inbox session': session,
      'GET inbox records': await http(us.url, 'GET', '/api/v1/inbox/records', { token: inboxToken }),
      'GET inbox': await http(us.url, 'GET', '/api/v1/inbox', { token: inboxToken }),
      'GET me': await api('GET', '/api/v1/me'),
      'POST api_tokens': await http(us.url, 'POST', `/api/v1/applications/${applicationId}/api_tokens`, { token: adminToken, body: {} }),
      'a 404': await api('GET', `/api/v1/applications/${applicationId}/subjects/sub_us00000000000000000000`),
      'a 422': await api('POST', '/api/v1/consent_records', { flow_id: flowId }),
    };
    const seen = Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.headers.get('cache-control')]));
    expect(seen).toEqual(Object.fromEntries(Object.keys(answers).map((name) => [name, 'no-store'])));
    expect(answers['GET subject'].status).toBe(200);
    expect(answers['a 404'].status).toBe(404);
  });

  it("leaves a route's own caching in place: a receipt says private, no-store", async () => {
    const recorded = await api('POST', '/api/v1/consent_records', {
      flow_id: flowId,
      subject: { email: 'edsger@example.com' },
      decisions: { newsletter: decision('granted'), analytics: decision('granted') },
      captured_at: '2026-11-20T10:00:00Z',
    });
    expect(recorded.status).toBe(201);
    const receipt = await api('GET', `/api/v1/consent_receipts/${recorded.body.consent_record.record_id}`);
    expect(receipt.status).toBe(200);
    expect(receipt.headers.get('cache-control')).toBe('private, no-store');
  });
});
