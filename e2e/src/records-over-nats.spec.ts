import { Client } from 'pg';
import { uniquePrefix } from '@dcr/testing';
import { applicationWithToken, CountryPair, eventually, http, importReportPages, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';

/**
 * The consent records of a flow with many purposes over real NATS, as production runs them: NATS
 * refuses a message over its `max_payload` (1 MiB by default), which the in-process bus of the other
 * end-to-end tests does not. An import's rows go in chunks bounded by bytes as well as rows, and the
 * outbox relays a backlog of large events in batches that fit.
 */
describe('consent records of a flow with many purposes, over NATS', () => {
  let us: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let db: Client;
  const keys = Array.from({ length: 100 }, (_, i) => `purpose_with_a_long_key_of_many_characters_${String(i).padStart(3, '0')}`);
  // Every purpose decided, with the presentation flags: about 11 KB of JSON a row.
  const decisions = Object.fromEntries(keys.map((key, i) => [key, { decision: i % 2 ? 'granted' : 'declined', default_checked: false, mandatory: false }]));
  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const rows = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ subject: { email: `${prefix}-${i}@example.com` }, decisions, captured_at: '2026-11-20T10:00:00Z' }));

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, transport: 'nats', namespace: uniquePrefix('records') });
    us = countries.us;
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      name: 'Preferences',
      pattern: 'standard',
      purposes: keys,
      purpose_definitions: Object.fromEntries(keys.map((key) => [key, { label: `Label of ${key} `.repeat(3).trim(), description: 'D'.repeat(1000), basis: 'consent', mechanism: 'explicit', required: false }])),
      consent_duration: 'P1Y',
    });
    expect(flow.status).toBe(201);
    flowId = flow.body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  }, 120000);

  afterAll(async () => {
    await db?.end();
    await countries?.close();
  });

  it('imports 300 rows of 100 purposes (3 MB, which 500-row chunks would have sent as messages NATS refuses), dry run and real', async () => {
    const records = rows('many', 300);
    expect(Buffer.byteLength(JSON.stringify(records))).toBeGreaterThan(3_000_000);
    const dry = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: true, records });
    expect([dry.status, dry.body.summary]).toEqual([200, { recorded: 300, refused: 0 }]);
    expect(Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count)).toBe(0);

    const real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    expect([real.status, real.body.status, real.body.summary]).toEqual([201, 'completed', { recorded: 300, refused: 0 }]);
    expect(real.body.rows.map((row: { index: number }) => row.index)).toEqual(records.map((_, i) => i));
    expect(Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count)).toBe(300);
    const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=many-299@example.com`);
    expect(status.status).toBe(200);
    expect(status.body.purposes[keys[1]]).toMatchObject({ status: 'granted' });
    expect(status.body.purposes[keys[0]]).toMatchObject({ status: 'declined' });

    // The 300 events (about 9 KB each) reach the audit trail and the receipts over NATS; the relay's
    // batches fit the bus, so it never falls back to sending them one at a time.
    await eventually(async () => Number((await db.query('SELECT count(*) FROM receipts.receipts')).rows[0].count) === 300, 60000);
    expect(Number((await db.query(`SELECT count(*) FROM audit_chain.entries WHERE event_type = 'consent.granted'`)).rows[0].count)).toBe(300);
    // The relay deletes a batch's rows in its own transaction after both consumers answered, so the
    // last batch's receipts can be read a moment before its rows are gone.
    await eventually(async () => Number((await db.query('SELECT count(*) FROM decisions.outbox')).rows[0].count) === 0, 10000);
    const fallbacks = us.logs.lines.filter((line) => String(line.msg ?? line.message ?? '').includes('relaying its events one at a time'));
    expect(fallbacks).toEqual([]);
  }, 120000);

  it('answers an import whose every row breaks all 100 purposes, naming the first 10 problems of each and counting the rest, and its report, read back in pages', async () => {
    // Three entries the flow does not have: each row has 103 problems; the report names 10 of them
    // (it named all 103, 16 KB a row: 10,000 such rows made a report of 140 MB) and counts the rest.
    const wrong = { not_a_purpose: { decision: 'granted' }, neither: { decision: 'declined' }, nor_this: { decision: 'granted' } };
    const records = Array.from({ length: 300 }, (_, i) => ({ subject: { email: `wrong-${i}@example.com` }, decisions: wrong, captured_at: '2026-11-20T10:00:00Z' }));
    const before = Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count);
    const dry = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: true, records });
    expect([dry.status, dry.body.summary]).toEqual([200, { recorded: 0, refused: 300 }]);
    expect([dry.body.rows[299].reasons.length, dry.body.rows[299].reasons_omitted]).toEqual([10, 93]);
    expect(dry.body.rows[299].reasons[0]).toEqual({ field: `decisions.${keys[0]}`, reason: expect.any(String) });

    const real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    expect([real.status, real.body.status, real.body.summary]).toEqual([201, 'completed', { recorded: 0, refused: 300 }]);
    expect(real.body.rows.every((row: { reasons: unknown[]; reasons_omitted: number }) => row.reasons.length === 10 && row.reasons_omitted === 93)).toBe(true);
    // Read back whole (the gateway puts together as many messages as the report needs)…
    const whole = await api('GET', `/api/v1/consent_records/imports/${real.body.import_id}`);
    expect([whole.status, whole.body.next_cursor]).toEqual([200, null]);
    expect(whole.body.rows).toEqual(real.body.rows);
    // …and a page at a time: each page holds at most `limit` rows, and what fits 512 KiB, and names the next.
    const report = await importReportPages(us.url, real.body.import_id, apiToken, 200);
    expect(report.rows).toEqual(real.body.rows);
    expect(report.pages.length).toBeGreaterThanOrEqual(2);
    for (const page of report.pages) {
      expect(page.summary).toEqual({ recorded: 0, refused: 300 });
      expect(Buffer.byteLength(JSON.stringify(page.rows))).toBeLessThanOrEqual(512 * 1024);
    }
    expect(Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count)).toBe(before);
  }, 120000);

  it("lists a person's records of a large flow on the records API and page in pages that each fit one message on the bus", async () => {
    const email = 'many-records@example.com';
    // 60 records of one person (an import of their history), each listed with 100 purposes and their labels.
    const history = Array.from({ length: 60 }, (_, i) => ({ subject: { email }, decisions, captured_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }));
    const imported = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: history });
    expect([imported.status, imported.body.summary]).toEqual([201, { recorded: 60, refused: 0 }]);
    expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email } })).status).toBe(200);
    const mail = await db.query(`SELECT text FROM decisions.dev_mailbox WHERE to_address = $1 ORDER BY sent_at DESC LIMIT 1`, [email]);
    const inbox = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email, code: /\b(\d{6})\b/.exec(mail.rows[0].text)![1] } });
    expect(inbox.status).toBe(201);

    // One page holds what fits one message (512 KiB of records, about 29 of these), then names the next.
    const pages: Array<Array<{ record_id: string; captured_at: string; recorded_at: string }>> = [];
    let cursor: string | null = null;
    do {
      const listed = await http(us.url, 'GET', `/api/v1/inbox/records?application_id=${applicationId}&limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token: inbox.body.inbox_token });
      expect(listed.status).toBe(200);
      expect(Buffer.byteLength(JSON.stringify(listed.body.data))).toBeLessThanOrEqual(512 * 1024);
      pages.push(listed.body.data);
      cursor = listed.body.next_cursor;
    } while (cursor);
    expect(pages.length).toBeGreaterThan(2);
    expect(Buffer.byteLength(JSON.stringify(pages.flat()))).toBeGreaterThan(1_048_576);
    // Each once, newest given first (captured_at, recorded_at, then record id, as the list always orders them).
    const ids = pages.flat().map((record) => record.record_id);
    expect([...ids].sort()).toEqual(imported.body.rows.map((row: { record_id: string }) => row.record_id).sort());
    const positions = pages.flat().map((record) => `${record.captured_at} ${record.recorded_at} ${record.record_id}`);
    expect(positions).toEqual([...positions].sort().reverse());

    // The page, likewise, links to the older records until the oldest is shown.
    const shown: string[] = [];
    let path: string | undefined = `/inbox/records?application_id=${applicationId}`;
    while (path) {
      const page = await fetch(`${us.url}${path}`, { headers: { cookie: `service_inbox=${inbox.body.inbox_token}` } });
      expect(page.status).toBe(200);
      const html = await page.text();
      shown.push(...[...html.matchAll(/<li class="hp-inbox-item" data-record-id="([^"]+)"/g)].map((match) => match[1]));
      path = /<a id="records-older" [^>]*href="([^"]+)"/.exec(html)?.[1].replace(/&amp;/g, '&');
    }
    expect(shown).toEqual(ids);
  }, 120000);

  it('refuses a row with more decisions than a flow can have purposes by its index', async () => {
    const records = rows('overfull', 2);
    records[0].decisions = { ...decisions, one_more: { decision: 'granted', default_checked: false, mandatory: false } };
    const answer = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: true, records });
    expect([answer.status, answer.body.details]).toEqual([422, [{ field: 'records[0].decisions', reason: 'has 101 entries; a flow has at most 100 purposes' }]]);
  });

  it('refuses a row over 64 KiB of JSON by its index before anything is written', async () => {
    const records = rows('huge', 3);
    records[1].decisions = { ...decisions, [keys[0]]: { decision: 'granted', default_checked: false, mandatory: false, note: 'x'.repeat(70_000) } } as typeof decisions;
    const before = Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count);
    const answer = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    expect(answer.status).toBe(422);
    expect(answer.body.details).toEqual([{ field: 'records[1]', reason: expect.stringMatching(/^is \d+ bytes of JSON; a row is at most 65536$/) }]);
    expect(Number((await db.query('SELECT count(*) FROM decisions.consent_records')).rows[0].count)).toBe(before);
  });
});
