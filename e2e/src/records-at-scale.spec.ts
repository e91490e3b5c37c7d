import { Client } from 'pg';
import { InProcessBus } from '@dcr/transport';
import { activeFlowApplication, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * A person with as many records as a real organisation reaches: one person's history of thousands of
 * records (imports of years of a form), listed on their records page and its API in bounded answers.
 */
describe('records at the sizes a real organisation reaches', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();
  let apiToken: string;
  let flowId: string;
  let db: Client;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const granted = { decision: 'granted' };
  const declined = { decision: 'declined' };

  /** An inbox token for `email`, its code read from the development mailbox. */
  const inboxToken = async (email: string): Promise<string> => {
    expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email } })).status).toBe(200);
    const mail = await db.query(`SELECT text FROM decisions.dev_mailbox WHERE to_address = $1 ORDER BY sent_at DESC LIMIT 1`, [email]);
    const code = /\b(\d{6})\b/.exec(mail.rows[0].text)![1];
    const session = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email, code } });
    expect(session.status).toBe(201);
    return session.body.inbox_token;
  };

  /** `count` records of `email` in one flow, an hour apart from 2020 on, alternately granting and declining `news`. */
  const importHistory = async (email: string, count: number) => {
    const start = Date.parse('2020-01-01T00:00:00Z');
    const records = Array.from({ length: count }, (_, i) => ({
      subject: { email },
      decisions: { news: i % 2 === 0 ? granted : declined, stats: granted },
      captured_at: new Date(start + i * 3_600_000).toISOString(),
    }));
    const imported = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    expect([imported.status, imported.body.summary]).toEqual([201, { recorded: count, refused: 0 }]);
  };

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ apiToken, flowId } = await activeFlowApplication(us, adminToken, { name: 'Signup', pattern: 'standard', purposes: ['news', 'stats'], consent_duration: 'P10Y' }));
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(() => Promise.all([db?.end(), us?.close()]));

  it("lists a person's 2,000 records of one flow in pages, each replaced record naming the next, not a timeout", async () => {
    const email = 'history@example.com';
    await importHistory(email, 2_000);
    const token = await inboxToken(email);
    const listed: Array<{ record_id: string; superseded_by?: string; withdrawable?: string[] }> = [];
    let cursor: string | null = null;
    do {
      const page = await http(us.url, 'GET', `/api/v1/inbox/records?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect([page.status, page.body.code]).toEqual([200, undefined]);
      listed.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(listed).toHaveLength(2_000);
    // Newest first: the newest record stands, each older one is replaced by the one listed above it.
    expect(listed[0].superseded_by).toBeUndefined();
    for (let i = 1; i < listed.length; i++) expect(listed[i].superseded_by).toBe(listed[i - 1].record_id);
    // Every newer record holds both purposes: nothing of a replaced record is withdrawn through it.
    expect(listed.filter((record) => record.withdrawable !== undefined)).toEqual([]);
  });

  it('refuses an external id the Record API refuses in an import row too, on subject.external_id', async () => {
    const at = '2025-01-01T00:00:00Z';
    // A control character, and 201 characters (the limit is 200, counted without spaces around them).
    const externalIds = ['crm\u00014711', 'e'.repeat(201)];
    for (const [i, externalId] of externalIds.entries()) {
      const subject = { email: `limits-${i}@example.com`, external_id: externalId };
      const recorded = await api('POST', '/api/v1/consent_records', { flow_id: flowId, subject, decisions: { news: { ...granted, default_checked: false, mandatory: false }, stats: { ...granted, default_checked: false, mandatory: false } }, captured_at: at });
      expect([recorded.status, recorded.body.details.map((detail: { field: string }) => detail.field)]).toEqual([422, ['subject.external_id']]);
      for (const dryRun of [true, false]) {
        const imported = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: dryRun, records: [{ subject, decisions: { news: granted, stats: granted }, captured_at: at }] });
        expect(imported.body.summary).toEqual({ recorded: 0, refused: 1 });
        expect(imported.body.rows[0].reasons.map((reason: { field: string }) => reason.field)).toEqual(['subject.external_id']);
      }
    }
  });
});
