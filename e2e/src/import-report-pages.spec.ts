import { activeFlowApplication, applicationWithToken, CountryPair, eventually, http, importReportPages, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';
import { openApiConformance } from '../support/openapi-conformance';
import { ImportConsentRecords } from '../../apps/decisions/src/records/import-consent-records';

/**
 * An import's report read back in pages (`GET /api/v1/consent_records/imports/<id>`): its rows by
 * index, `?limit=` (50 by default, 1 to 200) and the opaque `?cursor=` of the lists, the summary
 * whole on every page; a walk lists every row once, also while the import is still recording.
 */
describe('import reports in pages', () => {
  const adminToken = randomSecret();
  let [us, de]: RunningCountry[] = [];
  let countries: CountryPair | undefined;
  // The application, its API token and its active flow (activeFlowApplication).
  let applicationId: string, apiToken: string, flowId: string;

  const api = (method: string, path: string, body?: unknown, country = us, token = apiToken) => http(country.url, method, path, { token, body });
  const report = (importId: string, query = '', token = apiToken, country = us) => api('GET', `/api/v1/consent_records/imports/${importId}${query}`, undefined, country, token);
  const indexesOf = (rows: Array<{ index: number }>) => rows.map((row) => row.index);
  /** `n` rows captured in an order of their own (row i at minute (i * 7919) mod n), every ninth refused by the capture rules. */
  const rows = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      subject: { email: `${prefix}-${i}@example.com` },
      decisions: { newsletter: { decision: 'granted', default_checked: i % 9 === 0 }, analytics: { decision: 'declined' } },
      captured_at: new Date(Date.UTC(2021, 0, 1) + ((i * 7919) % n) * 60_000).toISOString(),
    }));

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken });
    ({ us, de } = countries);
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, NEWSLETTER_FLOW));
    await eventually(async () => (await api('GET', '/api/v1/me', undefined, de)).status === 200);
  }, 120000);

  afterAll(async () => {
    await countries?.close();
  });

  it("answers a real import's report whole without parameters, and by index a page at a time with limit or cursor (50 rows by default, up to 200), with the whole summary on every page", async () => {
    const records = rows('paged', 450);
    const real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    expect([real.status, real.body.status, real.body.summary]).toEqual([201, 'completed', { recorded: 400, refused: 50 }]);
    // The import's own answer is the whole report, as before.
    expect(indexesOf(real.body.rows)).toEqual(records.map((_, i) => i));
    expect(real.body.next_cursor).toBeUndefined();

    // Without parameters, the whole report as the import answered it.
    const whole = await report(real.body.import_id);
    expect([whole.status, whole.body.next_cursor]).toEqual([200, null]);
    const { next_cursor: _wholeNext, ...wholeReport } = whole.body;
    expect(wholeReport).toEqual(real.body);

    const first = await report(real.body.import_id, '?limit=50');
    expect(first.status).toBe(200);
    const conforms = await openApiConformance(us.url);
    expect(conforms('GET', '/api/v1/consent_records/imports/{import_id}', whole)).toEqual([true, null]);
    expect(conforms('GET', '/api/v1/consent_records/imports/{import_id}', first)).toEqual([true, null]);
    const { rows: _rows, next_cursor: _next, ...head } = first.body;
    expect(head).toEqual({ import_id: real.body.import_id, flow_id: flowId, dry_run: false, status: 'completed', summary: { recorded: 400, refused: 50 }, created_at: real.body.created_at });
    expect(first.body.rows).toEqual(real.body.rows.slice(0, 50));
    expect(first.body.next_cursor).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));

    // Walked to the end, at any page size: every row once, by index, the summary whole on every page.
    for (const [limit, sizes] of [
      [undefined, [450]],
      [50, Array.from({ length: 9 }, () => 50)],
      [200, [200, 200, 50]],
      [64, [...Array.from({ length: 7 }, () => 64), 2]],
      [450, undefined],
    ] as Array<[number | undefined, number[] | undefined]>) {
      if (sizes === undefined) {
        expect((await report(real.body.import_id, `?limit=${limit}`)).status).toBe(400);
        continue;
      }
      const walk = await importReportPages(us.url, real.body.import_id, apiToken, limit);
      expect([limit, walk.pages.map((page) => page.rows.length)]).toEqual([limit, sizes]);
      expect(walk.rows).toEqual(real.body.rows);
      for (const page of walk.pages) {
        expect(page).toMatchObject({ ...head, rows: expect.any(Array) });
        expect(conforms('GET', '/api/v1/consent_records/imports/{import_id}', { status: 200, body: page })).toEqual([true, null]);
      }
      expect(walk.pages[walk.pages.length - 1].next_cursor).toBeNull();
    }

    // A report that fits one page says so at once.
    const small = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: rows('small', 3) });
    const onePage = await report(small.body.import_id, '?limit=50');
    expect([onePage.status, indexesOf(onePage.body.rows), onePage.body.next_cursor]).toEqual([200, [0, 1, 2], null]);
  });

  it('refuses a bad limit or cursor with a 400 naming it', async () => {
    const real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: rows('refusals', 30) });
    const other = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: rows('refusals-other', 30) });
    expect([real.status, other.status]).toEqual([201, 201]);
    const fieldsOf = (answer: { body: { details?: Array<{ field: string }> } }) => answer.body.details?.map((detail) => detail.field);
    for (const limit of ['0', '201', '-1', 'ten', '1.5', '5&limit=6']) {
      const refused = await report(real.body.import_id, `?limit=${limit}`);
      expect([limit, refused.status, refused.body.code, fieldsOf(refused)]).toEqual([limit, 400, 'invalid_request', ['limit']]);
    }
    const cursorOf = async (importId: string) => (await report(importId, '?limit=10')).body.next_cursor as string;
    const own = await cursorOf(real.body.import_id);
    const position = JSON.parse(Buffer.from(own, 'base64url').toString('utf8'));
    const flowsCursor = (await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Second' })).status === 201 ? (await api('GET', `/api/v1/applications/${applicationId}/flows?limit=1`)).body.next_cursor : undefined;
    expect(flowsCursor).toEqual(expect.any(String));
    const refusedCursors: Array<[string, string]> = [
      ['not a cursor', 'not%20a%20cursor'],
      ["another import's", await cursorOf(other.body.import_id)],
      ["another list's", flowsCursor],
      // Changed by hand: more rows than the report holds, a position that is no row index.
      ['more rows than held', Buffer.from(JSON.stringify({ ...position, of: 31 })).toString('base64url')],
      ['no row index', Buffer.from(JSON.stringify({ ...position, after: 'nine' })).toString('base64url')],
    ];
    for (const [what, cursor] of refusedCursors) {
      const refused = await report(real.body.import_id, `?cursor=${cursor}`);
      expect([what, refused.status, refused.body.code, fieldsOf(refused)]).toEqual([what, 400, 'invalid_request', ['cursor']]);
    }
    // The cursor itself goes on where it stopped.
    const next = await report(real.body.import_id, `?cursor=${own}`);
    expect([next.status, indexesOf(next.body.rows)]).toEqual([200, Array.from({ length: 20 }, (_, i) => i + 10)]);
    // Any other parameter is refused by name, as on every /api/v1 route.
    const unknown = await report(real.body.import_id, '?page=2');
    expect([unknown.status, fieldsOf(unknown)]).toEqual([400, ['page']]);
  });

  it("answers an import's pages only to its account (404 to another account's application, with or without a cursor) and in its own country", async () => {
    const real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: rows('scoped', 60) });
    expect(real.status).toBe(201);
    const cursor = (await report(real.body.import_id, '?limit=50')).body.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    // (An application of its own account reads them: an API token reaches every application of its account.)
    const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other shop', environment: 'sandbox' });
    await eventually(async () => (await api('GET', '/api/v1/me', undefined, de, otherToken)).status === 200);
    for (const country of [us, de]) {
      for (const query of ['', '?limit=10', `?cursor=${cursor}`]) {
        const foreign = await report(real.body.import_id, query, otherToken, country);
        expect([country.country, query, foreign.status, foreign.body.code]).toEqual([country.country, query, 404, 'not_found']);
      }
    }
    const elsewhere = await report(real.body.import_id, `?cursor=${cursor}`, apiToken, de);
    expect([elsewhere.status, elsewhere.body.home_country]).toEqual([421, 'US']);
  });

  it("answers a dry run's report whole and keeps none of it (a dry run writes nothing)", async () => {
    const records = rows('dry', 450);
    const dry = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: true, records });
    expect([dry.status, dry.body.dry_run, dry.body.summary]).toEqual([200, true, { recorded: 400, refused: 50 }]);
    expect(indexesOf(dry.body.rows)).toEqual(records.map((_, i) => i));
    expect((await report(dry.body.import_id)).status).toBe(404);
  });

  it('lists every row once while the import is still recording: a walk goes on over the rows it began with, a new walk lists them all', async () => {
    const records = rows('recording', 600);
    // The order the rows are decided in: by captured_at (rows captured at the same moment in row order).
    const decidedOrder = records.map((row, index) => ({ index, at: Date.parse(row.captured_at) })).sort((a, b) => a.at - b.at || a.index - b.index).map((row) => row.index);
    const execute = ImportConsentRecords.prototype.execute;
    let during: { offset: number; first: any } | undefined;
    // Before the last chunk is recorded, someone reads the report's first page.
    const spy = jest.spyOn(ImportConsentRecords.prototype, 'execute').mockImplementation(async function (this: ImportConsentRecords, request) {
      if (request.last && request.offset > 0 && !during) during = { offset: request.offset, first: (await report(request.import_id, '?limit=100')).body };
      return execute.call(this, request);
    });
    let real: Awaited<ReturnType<typeof api>>;
    try {
      real = await api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records });
    } finally {
      spy.mockRestore();
    }
    expect([real.status, real.body.summary]).toEqual([201, { recorded: 533, refused: 67 }]);
    expect(during).toBeDefined();
    const { offset, first } = during!;
    const began = decidedOrder.slice(0, offset).sort((a, b) => a - b);
    expect(first.status).toBe('in_progress');
    expect(first.summary.recorded + first.summary.refused).toBe(offset);
    expect(indexesOf(first.rows)).toEqual(began.slice(0, 100));
    // The rows recorded since lie before and after the first page's last index.
    const since = decidedOrder.slice(offset);
    expect(since.some((index) => index < began[99]) && since.some((index) => index > began[99])).toBe(true);

    // The walk goes on over the rows it began with: none twice, none skipped, none of those recorded since.
    const listed = [...first.rows];
    let cursor: string | null = first.next_cursor;
    while (cursor) {
      const page = await report(real.body.import_id, `?limit=100&cursor=${cursor}`);
      expect(page.status).toBe(200);
      // The summary and status are the report's as it stands.
      expect([page.body.status, page.body.summary]).toEqual(['completed', { recorded: 533, refused: 67 }]);
      listed.push(...page.body.rows);
      cursor = page.body.next_cursor;
    }
    expect(indexesOf(listed)).toEqual(began);
    expect(listed).toEqual(real.body.rows.filter((row: { index: number }) => began.includes(row.index)));
    // A walk begun now lists every row.
    expect((await importReportPages(us.url, real.body.import_id, apiToken, 100)).rows).toEqual(real.body.rows);
  });
});
