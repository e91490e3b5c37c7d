import { Client } from 'pg';
import { InProcessBus, TransportHeaders } from '@dcr/transport';
import { activeFlowApplication, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * A person with as many records as a real organisation reaches: one person's history of thousands of
 * records (imports of years of a form), listed on their records page and its API in bounded answers.
 */
/** The bus, counting the records each answer of the decisions service's records list carries to the gateway. */
class WatchedBus extends InProcessBus {
  readonly recordsCarried: number[] = [];

  override call(subject: string, body: string, headers: TransportHeaders, timeoutMs: number) {
    const pending = super.call(subject, body, headers, timeoutMs);
    if (subject.endsWith('decisions.inbox.records')) {
      void pending.reply.then(
        (reply) => this.recordsCarried.push((reply.match(/"record_id":/g) ?? []).length),
        () => undefined,
      );
    }
    return pending;
  }
}

describe('records at the sizes a real organisation reaches', () => {
  let us: RunningCountry;
  const adminToken = randomSecret();
  const bus = new WatchedBus();
  let applicationId: string;
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

  /**
   * `count` records of `email` in one flow (`flow`, else the first), `every` hours apart from 2020 on
   * plus `offset` hours, alternately granting and declining `news`.
   */
  const importHistory = async (email: string, count: number, flow = flowId, every = 1, offset = 0) => {
    const start = Date.parse('2020-01-01T00:00:00Z');
    const records = Array.from({ length: count }, (_, i) => ({
      subject: { email },
      decisions: { news: i % 2 === 0 ? granted : declined, stats: granted },
      captured_at: new Date(start + (i * every + offset) * 3_600_000).toISOString(),
    }));
    const imported = await api('POST', '/api/v1/consent_records/imports', { flow_id: flow, dry_run: false, records });
    expect([imported.status, imported.body.summary]).toEqual([201, { recorded: count, refused: 0 }]);
  };

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus, subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, { name: 'Signup', pattern: 'standard', purposes: ['news', 'stats'], consent_duration: 'P10Y' }));
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

  it("reads one page of a person's records at a time, over three flows, and pages the records page, withdrawing on a later page", async () => {
    const email = 'pages@example.com';
    // Three flows of the organisation, their records interleaved an hour apart (flow A, B, C, A, …),
    // and one record of a fourth flow given between them, so that it is listed on the second page of seven.
    const flow = async (name: string) => {
      const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, { name, pattern: 'standard', purposes: ['news', 'stats'], consent_duration: 'P10Y' });
      expect((await api('POST', `/api/v1/flows/${created.body.id}/activate`)).status).toBe(200);
      return created.body.id as string;
    };
    const flows = [flowId, await flow('Orders'), await flow('Events')];
    for (const [i, id] of flows.entries()) await importHistory(email, 20, id, 3, i);
    const lone = await flow('Survey');
    const single = await api('POST', '/api/v1/consent_records/imports', {
      flow_id: lone,
      dry_run: false,
      records: [{ subject: { email }, decisions: { news: granted, stats: granted }, captured_at: new Date(Date.parse('2020-01-01T00:00:00Z') + 50.5 * 3_600_000).toISOString() }],
    });
    expect(single.body.summary).toEqual({ recorded: 1, refused: 0 });
    const token = await inboxToken(email);
    type Listed = { record_id: string; flow_id: string; superseded_by?: string; purposes: Record<string, { status: string }> };

    // The API, seven at a time: each page is read from the decisions service alone, not the whole history.
    const pages: Listed[][] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const before = bus.recordsCarried.length;
      const page = await http(us.url, 'GET', `/api/v1/inbox/records?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect([page.status, page.body.code]).toEqual([200, undefined]);
      expect(bus.recordsCarried.slice(before).reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(7);
      pages.push(page.body.data);
      cursor = page.body.next_cursor;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 5]);
    const listed = pages.flat();
    // The same records as one page of all of them, each as it is listed there.
    const whole = await http(us.url, 'GET', '/api/v1/inbox/records?limit=200', { token });
    expect(whole.body).toEqual({ data: listed, next_cursor: null });
    // Each replaced record names the record of its flow listed above it, also when that one is on the previous page.
    let acrossPages = 0;
    for (const [i, record] of listed.entries()) {
      const newer = listed.slice(0, i).reverse().find((other) => other.flow_id === record.flow_id);
      expect([record.record_id, record.superseded_by]).toEqual([record.record_id, newer?.record_id]);
      if (newer && i % 7 < 3 && listed.indexOf(newer) < i - (i % 7)) acrossPages++;
    }
    expect(acrossPages).toBeGreaterThan(0);
    const survey = listed.find((record) => record.flow_id === lone)!;
    expect(pages[1].map((record) => record.record_id)).toContain(survey.record_id);

    // A cursor changed by hand, or one of another list (one organisation's), is refused by name.
    const tampered = cursors[0].slice(0, -2) + (cursors[0].endsWith('AA') ? 'BB' : 'AA');
    const organisation = await http(us.url, 'GET', `/api/v1/inbox/records?limit=7&application_id=${applicationId}`, { token });
    for (const bad of [tampered, 'x' + cursors[0], organisation.body.next_cursor]) {
      const refused = await http(us.url, 'GET', `/api/v1/inbox/records?limit=7&cursor=${bad}`, { token });
      expect([refused.status, refused.body.details?.[0]?.field]).toEqual([400, 'cursor']);
    }

    // The page: 50 records by default, then seven at a time with ?limit=, each page linking to the older
    // records and back to the newest, keeping the organisation and the link that opened it.
    const cookie = `service_inbox=${token}`;
    const page = async (path: string) => {
      const answer = await fetch(`${us.url}${path}`, { headers: { cookie } });
      const text = await answer.text();
      return { status: answer.status, text, ids: [...text.matchAll(/<li class="hp-inbox-item" data-record-id="([^"]+)"/g)].map((match) => match[1]) };
    };
    const href = (text: string, id: string) => [...text.matchAll(/<a id="([^"]+)"[^>]* href="([^"]+)"/g)].find((match) => match[1] === id)?.[2].replace(/&amp;/g, '&');
    const first = await page('/inbox/records');
    expect([first.status, first.ids]).toEqual([200, listed.slice(0, 50).map((record) => record.record_id)]);
    expect(href(first.text, 'records-older')).toMatch(/^\/inbox\/records\?cursor=[A-Za-z0-9_-]+$/);
    expect(href(first.text, 'records-newest')).toBeUndefined();
    const older = await page(href(first.text, 'records-older')!);
    expect(older.ids).toEqual(listed.slice(50).map((record) => record.record_id));
    expect(href(older.text, 'records-older')).toBeUndefined();
    expect(href(older.text, 'records-newest')).toBe('/inbox/records');

    const sevens = await page(`/inbox/records?application_id=${applicationId}&via=email&limit=7`);
    expect(sevens.ids).toEqual(pages[0].map((record) => record.record_id));
    const secondPath = href(sevens.text, 'records-older')!;
    expect(secondPath).toMatch(new RegExp(`^/inbox/records\\?application_id=${applicationId}&via=email&limit=7&cursor=[A-Za-z0-9_-]+$`));
    const second = await page(secondPath);
    expect(second.ids).toEqual(pages[1].map((record) => record.record_id));
    expect(href(second.text, 'records-newest')).toBe(`/inbox/records?application_id=${applicationId}&via=email&limit=7`);
    expect(second.text).toMatch(/<nav [^>]*aria-label="[^"]+"[^>]*>/);
    const bad = await page(`/inbox/records?limit=7&cursor=${tampered}`);
    expect([bad.status, bad.text]).toEqual([400, expect.stringContaining('cursor')]);

    // Withdrawing on the second page comes back to that page, which confirms it.
    const action = new RegExp(`<form class="hp-inline-form" method="post" action="(/inbox/records/${survey.record_id}/withdraw[^"]*)"><input type="hidden" name="purpose" value="news">`).exec(second.text)?.[1].replace(/&amp;/g, '&');
    expect(action).toBe(`/inbox/records/${survey.record_id}/withdraw${secondPath.slice('/inbox/records'.length)}`);
    const post = (path: string) =>
      fetch(`${us.url}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: us.url, 'sec-fetch-site': 'same-origin' }, body: 'purpose=news' });
    const withdrawn = await post(action!);
    expect([withdrawn.status, withdrawn.headers.get('location')]).toEqual([303, `${secondPath}&withdrawn=${survey.record_id}&purpose=news`]);
    const confirmed = await page(withdrawn.headers.get('location')!);
    expect(confirmed.ids).toEqual(pages[1].map((record) => record.record_id));
    expect(confirmed.text).toMatch(/<p id="records-confirmation" class="hp-notice" role="status">Your withdrawal of “[^”]+” from “Survey” was recorded/);
    // Refused (withdrawn already), the same page says so, with the record as it stands.
    const again = await post(action!);
    const refused = await again.text();
    expect([again.status, [...refused.matchAll(/<li class="hp-inbox-item" data-record-id="([^"]+)"/g)].map((match) => match[1])]).toEqual([409, pages[1].map((record) => record.record_id)]);
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
