import { createHmac } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { validateReceipt } from '@dcr/receipts';
import { allPages, applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';
import { openApiConformance } from '../support/openapi-conformance';

/** What Typeform's `GET /forms/{form_id}` answers for the sign-up form (reduced to what matters). */
const FORM_ID = 'Sg7upQ';
const TYPEFORM_FORM = {
  id: FORM_ID,
  title: 'Sign up',
  hidden: ['crm_id'],
  fields: [
    { id: 'f_email', ref: 'email_q', type: 'email', title: 'Your e-mail', validations: { required: true } },
    { id: 'f_news', ref: 'newsletter_q', type: 'yes_no', title: 'Send me the newsletter', validations: { required: false } },
    {
      id: 'f_analytics',
      ref: 'analytics_q',
      type: 'multiple_choice',
      title: 'May we measure your visits?',
      properties: { allow_multiple_selection: false, choices: [{ id: 'c_yes', ref: 'analytics_yes', label: 'Yes' }, { id: 'c_no', ref: 'analytics_no', label: 'No' }] },
      validations: { required: false },
    },
    { id: 'f_fraud', ref: 'fraud_q', type: 'yes_no', title: 'I object to fraud checks on my account', validations: { required: false } },
    { id: 'f_terms', ref: 'terms_q', type: 'legal', title: 'I accept the terms', validations: { required: true } },
    { id: 'f_rating', ref: 'rating_q', type: 'rating', title: 'Rate us' },
    { id: 'f_bio', ref: 'bio_q', type: 'long_text', title: 'About you' },
  ],
};

const MAPPING = {
  email: 'email_q',
  external_id: 'crm_id',
  purposes: { newsletter: { field: 'newsletter_q' }, analytics: { field: 'analytics_q', choice: 'analytics_yes' }, fraud: { field: 'fraud_q' } },
};

/** A fake of Typeform's API: GET /forms/{id} with the right bearer token answers the form. */
class FakeTypeformApi {
  readonly requests: Array<{ path: string; authorization: string | undefined }> = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      this.requests.push({ path: request.url ?? '', authorization: request.headers.authorization });
      const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.headers.authorization !== 'Bearer tfp_good') return send(401, { code: 'AUTHENTICATION_FAILED', description: 'Authentication credentials not found on the Request Headers' });
      if (request.method === 'GET' && request.url === `/forms/${FORM_ID}`) return send(200, TYPEFORM_FORM);
      return send(404, { code: 'FORM_NOT_FOUND', description: 'Non existing form with uid' });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * Hosted form-builder connections end to end, modelled on Typeform: the mapping rules refuse by name
 * at saving, a signed submission becomes a consent record with channel form_platform_webhook and the
 * platform on its receipt, the test request records nothing, bad signatures are 401, the previous
 * secret is honoured for one day after a rotation, redeliveries answer the same record, and a
 * personal access token fetches the form from (a local fake of) Typeform's API.
 */
describe('form connections', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const typeform = new FakeTypeformApi();
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let db: Client;

  const api = (method: string, path: string, body?: unknown, token = apiToken, country = us) => http(country.url, method, path, { token, body });
  const connections = () => `/api/v1/applications/${applicationId}/form_connections`;
  const create = (extra: Record<string, unknown> = {}) =>
    api('POST', connections(), { platform: 'typeform', form_id: FORM_ID, flow_id: flowId, mapping: MAPPING, form_definition: TYPEFORM_FORM, ...extra });
  const count = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows[0].n as number;

  /**
   * A Typeform webhook body, as Typeform documents it. The hidden CRM id is the first submission's
   * token for each e-mail address (one person, one id: another id for the same address is refused).
   */
  const crmIds = new Map<string, string>();
  const crmIdOf = (token: string, answers: unknown[]) => {
    const address = (answers as Array<{ type?: string; email?: string }>).find((answer) => answer.type === 'email')?.email;
    if (!address) return `crm-${token}`;
    if (!crmIds.has(address)) crmIds.set(address, `crm-${token}`);
    return crmIds.get(address)!;
  };
  const submission = (token: string, answers: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      event_id: `evt${token}`,
      event_type: 'form_response',
      form_response: {
        form_id: FORM_ID,
        token,
        landed_at: '2026-11-20T09:58:00Z',
        submitted_at: '2026-11-20T10:00:00Z',
        hidden: { crm_id: crmIdOf(token, answers) },
        definition: { id: FORM_ID, title: 'Sign up', fields: [] },
        answers,
        ...extra,
      },
    });
  const email = (address: string) => ({ type: 'email', email: address, field: { id: 'f_email', type: 'email', ref: 'email_q' } });
  const yesNo = (ref: string, id: string, value: boolean) => ({ type: 'boolean', boolean: value, field: { id, type: 'yes_no', ref } });
  const choice = (ref: string) => ({ type: 'choice', choice: { id: ref === 'analytics_yes' ? 'c_yes' : 'c_no', label: 'x', ref }, field: { id: 'f_analytics', type: 'multiple_choice', ref: 'analytics_q' } });
  const sign = (secret: string, raw: string) => 'sha256=' + createHmac('sha256', secret).update(raw, 'utf8').digest('base64');
  const deliver = (connectionId: string, raw: string, signature: string | null, country = us) =>
    http(country.url, 'POST', `/hooks/typeform/${connectionId}`, { rawBody: raw, headers: signature === null ? {} : { 'typeform-signature': signature } });

  beforeAll(async () => {
    await typeform.start();
    countries = await startCountryPair({ adminToken, env: { FORM_BUILDER_TYPEFORM_API_URL: typeform.url, RATE_LIMIT_RPS: '20' } });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Typeform sign-up' });
    flowId = flow.body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await countries?.close();
    await typeform.close();
  });

  it('refuses mappings that break the rules, naming each, and keeps nothing', async () => {
    const purposes = (change: Record<string, unknown>) => ({ mapping: { ...MAPPING, purposes: { ...MAPPING.purposes, ...change } } });
    const { fraud: _fraud, ...withoutFraud } = MAPPING.purposes;
    const cases: Array<[Record<string, unknown>, Array<[string, RegExp]>]> = [
      [purposes({ newsletter: { field: 'terms_q' } }), [['mapping.purposes.newsletter', /required question terms_q/]]],
      [purposes({ newsletter: { field: 'rating_q' } }), [['mapping.purposes.newsletter', /rating question: a score or a number is not a decision/]]],
      [purposes({ newsletter: { field: 'bio_q' } }), [['mapping.purposes.newsletter', /free text is not a decision/]]],
      [purposes({ analytics: { field: 'analytics_q' } }), [['mapping.purposes.analytics.choice', /missing: name the ref of the choice/]]],
      [purposes({ analytics: { field: 'analytics_q', choice: 'maybe' } }), [['mapping.purposes.analytics.choice', /maybe is not a choice of analytics_q/]]],
      // A misspelt `choice` was accepted and silently dropped.
      [purposes({ newsletter: { field: 'newsletter_q', chioce: 'yes' } }), [['mapping.purposes.newsletter.chioce', /not a field of a purpose mapping/]]],
      // …and named beside what else is wrong with that purpose (it hid the missing yes-choice).
      [
        purposes({ analytics: { field: 'analytics_q', chioce: 'analytics_yes' } }),
        [
          ['mapping.purposes.analytics.chioce', /not a field of a purpose mapping/],
          ['mapping.purposes.analytics.choice', /missing: name the ref of the choice/],
        ],
      ],
      [
        { mapping: { ...MAPPING, purposes: { ...withoutFraud, lottery: { field: 'newsletter_q' }, billing: { field: 'terms_q' } } } },
        [
          ['mapping.purposes.lottery', /not a purpose of this flow/],
          ['mapping.purposes.billing', /notice-only/],
          ['mapping.purposes.fraud', /is not mapped/],
        ],
      ],
      [{ mapping: { ...MAPPING, email: 'bio_q', external_id: 'user_id' } }, [['mapping.email', /must be an email question/], ['mapping.external_id', /no hidden field named user_id/]]],
      [{ form_definition: undefined }, [['form_definition', /personal_access_token/]]],
      // null is no definition either (it was fetched from Typeform with no token: a 503).
      [{ form_definition: null }, [['form_definition', /personal_access_token/]]],
      [{ form_definition: { ...TYPEFORM_FORM, id: 'Other1' } }, [['form_definition.id', /another form/]]],
      [{ platform: 'jotform', form_id: 'no such id!' }, [['platform', /./], ['form_id', /./]]],
      // 2,000 levels were accepted and kept (and thousands more overflowed the transport's encoding, a 500);
      // any body is refused past 64 levels, named where it crosses them.
      [{ form_definition: { ...TYPEFORM_FORM, settings: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) } }, [['form_definition.settings' + '[0]'.repeat(62), /nests deeper than 64 levels/]]],
    ];
    for (const [change, expected] of cases) {
      const refused = await create(change);
      expect(refused.status).toBe(422);
      expect(refused.body.code).toBe('validation_failed');
      expect(refused.body.details).toEqual(expected.map(([field, reason]) => ({ field, reason: expect.stringMatching(reason) })));
    }
    expect(await count('SELECT count(*)::int AS n FROM decisions.form_connections')).toBe(0);
  });

  it('creates a connection whose secret is shown once and kept only sealed, on the audit trail', async () => {
    const created = await create();
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body).toEqual({
      id: expect.stringMatching(/^fcn_us[0-9a-z]{20}$/),
      platform: 'typeform',
      form_id: FORM_ID,
      flow_id: flowId,
      webhook_url: `${us.url}/hooks/typeform/${id}`,
      mapping: MAPPING,
      personal_access_token: false,
      previous_secret_expires_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^fcsec_[A-Za-z0-9_-]{43}$/),
    });
    const read = await api('GET', `${connections()}/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(read.body.webhook_url).toBe(created.body.webhook_url);
    const list = await api('GET', connections());
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(id);
    expect(list.body.data.every((c: Record<string, unknown>) => !('secret' in c))).toBe(true);

    const stored = (await db.query('SELECT * FROM decisions.form_connections WHERE id = $1', [id])).rows[0];
    expect(stored.secret_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(created.body.secret);

    await eventually(async () => (await api('GET', `/api/v1/applications/${applicationId}/audit?type=form_connection.created`)).body.data.length === 1);
    const entry = (await api('GET', `/api/v1/applications/${applicationId}/audit?type=form_connection.created`)).body.data[0];
    expect(entry.actor).toMatchObject({ type: 'application' });
  });

  it('refuses a signed submission that answers one question twice, naming the second answer, and records nothing', async () => {
    const { body: connection } = await create();
    const before = (await db.query('SELECT count(*)::int AS n FROM decisions.consent_records')).rows[0].n;
    const raw = submission('b4b12ec67a1365927098a606107fac15', [email('twice@example.org'), yesNo('newsletter_q', 'f_news', false), yesNo('newsletter_q', 'f_news', true), choice('analytics_no'), yesNo('fraud_q', 'f_fraud', true)]);
    const delivered = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect([delivered.status, delivered.body.details?.map((d: { field: string }) => d.field)]).toEqual([422, ['form_response.answers[2]']]);
    expect((await db.query('SELECT count(*)::int AS n FROM decisions.consent_records')).rows[0].n).toBe(before);
  });

  it('records a signed submission with channel form_platform_webhook and platform typeform; a redelivery answers the same record', async () => {
    const { body: connection } = await create();
    const raw = submission('a3a12ec67a1365927098a606107fac15', [
      email('ada@example.org'),
      yesNo('newsletter_q', 'f_news', true),
      choice('analytics_no'),
      yesNo('fraud_q', 'f_fraud', true),
      { type: 'boolean', boolean: true, field: { id: 'f_terms', type: 'legal', ref: 'terms_q' } },
    ]);
    const delivered = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect(delivered.status).toBe(200);
    expect(delivered.body).toEqual({ accepted: true, record_id: expect.stringMatching(/^rec_us[0-9a-z]{20}$/) });
    const recordId = delivered.body.record_id;

    const stored = (await db.query('SELECT channel, purposes, captured_at FROM decisions.consent_records WHERE record_id = $1', [recordId])).rows[0];
    expect(stored.channel).toBe('form_platform_webhook');
    expect(stored.captured_at.toISOString()).toBe('2026-11-20T10:00:00.000Z');
    expect(stored.purposes).toEqual({
      newsletter: { status: 'granted', basis: 'consent' },
      analytics: { status: 'declined', basis: 'consent' },
      fraud: { status: 'objected', basis: 'legitimate_interest' },
      billing: { status: 'noticed', basis: 'contract' },
    });

    await eventually(async () => (await api('GET', `/api/v1/consent_receipts/${recordId}`)).status === 200);
    const receipt = (await api('GET', `/api/v1/consent_receipts/${recordId}`)).body;
    expect(validateReceipt(receipt).valid).toBe(true);
    expect(receipt.extensions).toMatchObject({ collection_channel: 'form_platform_webhook', collection_platform: 'typeform', captured_at: '2026-11-20T10:00:00.000Z' });
    expect(receipt.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id)).toEqual(['newsletter']);
    // The objection answered in the form is on the receipt; how the form showed each box is the organisation's word.
    expect(receipt.event.filter((e: { event_state: string }) => e.event_state === 'objection recorded')).toEqual([expect.objectContaining({ purpose_id: 'fraud', event_type: 'explicit' })]);
    expect(receipt.extensions.presentation_attested).toEqual(['newsletter', 'analytics', 'fraud']);

    const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[external_id]=crm-a3a12ec67a1365927098a606107fac15`);
    expect(status.body.purposes).toMatchObject({ newsletter: { status: 'granted', record_id: recordId }, fraud: { status: 'objected' } });

    // Typeform retries what it could not confirm: the same response answers the same record.
    const again = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: true, record_id: recordId });
    // Another body under the same response token is refused (the token is the idempotency key), and records nothing.
    const changed = submission('a3a12ec67a1365927098a606107fac15', [email('ada@example.org'), yesNo('newsletter_q', 'f_news', false), choice('analytics_no')]);
    const conflict = await deliver(connection.id, changed, sign(connection.secret, changed));
    expect([conflict.status, conflict.body.code]).toEqual([409, 'idempotency_conflict']);
    // Named by what the delivery carries (Typeform's response token), not by a field the sender never sent.
    expect(conflict.body.details).toEqual([{ field: 'form_response.token', reason: expect.stringMatching(/recorded before with other answers/) }]);
    const conforms = await openApiConformance(us.url);
    for (const answer of [delivered, conflict]) expect(conforms('POST', '/hooks/typeform/{connection_id}', answer)).toEqual([true, null]);
    expect(await count(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE $1`, [`typeform:${connection.id}:%`])).toBe(1);

    // An unanswered optional consent question is a decline; an unanswered objection is none.
    const quiet = submission('quiet0001', [email('grace@example.org')]);
    const quietRecord = await deliver(connection.id, quiet, sign(connection.secret, quiet));
    expect(quietRecord.status).toBe(200);
    const quietPurposes = (await db.query('SELECT purposes FROM decisions.consent_records WHERE record_id = $1', [quietRecord.body.record_id])).rows[0].purposes;
    expect(quietPurposes).toMatchObject({ newsletter: { status: 'declined' }, analytics: { status: 'declined' }, fraud: { status: 'noticed' } });
    // Only the questions answered were surely shown (the form's logic may skip some): a submission
    // answering the newsletter alone attests that question's presentation alone.
    const partial = submission('b4b23fd78b2476038109b717218bad26', [email('grace@example.org'), yesNo('newsletter_q', 'f_news', false)]);
    const partialRecord = (await deliver(connection.id, partial, sign(connection.secret, partial))).body.record_id;
    await eventually(async () => (await api('GET', `/api/v1/consent_receipts/${partialRecord}`)).status === 200);
    expect((await api('GET', `/api/v1/consent_receipts/${partialRecord}`)).body.extensions.presentation_attested).toEqual(['newsletter']);
  });

  it("answers the builder's test request as accepted and records nothing", async () => {
    const { body: connection } = await create();
    const before = await count('SELECT count(*)::int AS n FROM decisions.consent_records');
    const people = await count('SELECT count(*)::int AS n FROM decisions.subjects');
    // What Typeform's "Send test request" sends: sample answers, the e-mail question filled with an_account@example.com.
    const raw = submission('01HTESTREQUEST0000000000', [
      email('an_account@example.com'),
      yesNo('newsletter_q', 'f_news', true),
      choice('analytics_yes'),
      { type: 'text', text: 'Lorem ipsum dolor', field: { id: 'f_bio', type: 'long_text', ref: 'bio_q' } },
    ]);
    const answered = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ accepted: true, test: true });
    // Only a signed test request is accepted.
    expect((await deliver(connection.id, raw, sign('fcsec_not-the-secret', raw))).status).toBe(401);
    expect(await count('SELECT count(*)::int AS n FROM decisions.consent_records')).toBe(before);
    expect(await count('SELECT count(*)::int AS n FROM decisions.subjects')).toBe(people);
  });

  it('refuses a wrong or missing signature (401), an unknown connection (404), another country (421) and a submission the rules refuse (422)', async () => {
    const { body: connection } = await create();
    const before = await count('SELECT count(*)::int AS n FROM decisions.consent_records');
    const raw = submission('sig0001', [email('mallory@example.org'), yesNo('newsletter_q', 'f_news', true)]);

    const forged = await deliver(connection.id, raw, sign('fcsec_guess', raw));
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('unauthenticated');
    expect(forged.body.message).toMatch(/does not match this connection's secret: sign the exact bytes sent/);
    // A signature in another form than Typeform's says which form it must have.
    const hex = await deliver(connection.id, raw, 'sha256=' + createHmac('sha256', connection.secret).update(raw).digest('hex'));
    expect([hex.status, hex.body.message]).toEqual([401, expect.stringMatching(/hex digest; Typeform's is base64/)]);
    const bare = await deliver(connection.id, raw, sign(connection.secret, raw).slice('sha256='.length));
    expect([bare.status, bare.body.message]).toEqual([401, expect.stringMatching(/must start with sha256=/)]);
    expect((await deliver(connection.id, raw, null)).status).toBe(401);
    // A signature over other bytes (the same JSON re-serialised with spaces) does not match.
    expect((await deliver(connection.id, JSON.stringify(JSON.parse(raw), null, 2), sign(connection.secret, raw))).status).toBe(401);

    expect((await deliver('fcn_us00000000000000000000', raw, sign(connection.secret, raw))).status).toBe(404);
    expect((await deliver('not-a-connection', raw, sign(connection.secret, raw))).status).toBe(404);
    const misdirected = await deliver(connection.id, raw, sign(connection.secret, raw), de);
    expect(misdirected.status).toBe(421);
    expect(misdirected.body).toMatchObject({ code: 'wrong_country', home_country: 'US' });
    expect((await http(de.url, 'GET', `${connections()}/${connection.id}`, { token: apiToken })).status).toBe(421);

    const changedForm = submission('rules0001', [email('mallory@example.org'), { type: 'text', text: 'yes', field: { id: 'f_news', type: 'short_text', ref: 'newsletter_q' } }]);
    const refused = await deliver(connection.id, changedForm, sign(connection.secret, changedForm));
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual([{ field: 'decisions.newsletter', reason: expect.stringMatching(/not yes\/no/) }]);

    const otherForm = submission('rules0002', [email('mallory@example.org')], { form_id: 'Other1' });
    const wrongForm = await deliver(connection.id, otherForm, sign(connection.secret, otherForm));
    expect(wrongForm.status).toBe(422);
    expect(wrongForm.body.details[0].field).toBe('form_response.form_id');

    const notJson = await deliver(connection.id, 'event_type=form_response', sign(connection.secret, 'event_type=form_response'));
    expect(notJson.status).toBe(400);
    expect([notJson.body.code, notJson.body.details]).toEqual(['malformed_json', [{ field: 'body', reason: expect.any(String) }]]);
    // Sent as text (Typeform sends JSON): read after the signature, and refused the same way once signed.
    const text = await http(us.url, 'POST', `/hooks/typeform/${connection.id}`, { rawBody: 'abc', headers: { 'content-type': 'text/plain', 'typeform-signature': sign(connection.secret, 'abc') } });
    expect([text.status, text.body.code, text.body.details]).toEqual([400, 'malformed_json', [{ field: 'body', reason: expect.any(String) }]]);
    const xml = '<form_response><token>rules0004</token></form_response>';
    const notJsonAtAll = await http(us.url, 'POST', `/hooks/typeform/${connection.id}`, { rawBody: xml, headers: { 'content-type': 'application/xml', 'typeform-signature': sign(connection.secret, xml) } });
    expect([notJsonAtAll.status, notJsonAtAll.body.code]).toEqual([415, 'unsupported_media_type']);
    const huge = submission('big0001', [email('mallory@example.org')], { padding: 'x'.repeat(600 * 1024) });
    const tooLarge = await deliver(connection.id, huge, sign(connection.secret, huge));
    expect(tooLarge.status).toBe(413);
    // Every refusal is documented with the error body it has.
    const conforms = await openApiConformance(us.url);
    for (const answer of [forged, refused, notJson, text, notJsonAtAll, tooLarge]) expect(conforms('POST', '/hooks/typeform/{connection_id}', answer)).toEqual([true, null]);
    expect((await openApiConformance(de.url))('POST', '/hooks/typeform/{connection_id}', misdirected)).toEqual([true, null]);

    const partial = JSON.stringify({ ...JSON.parse(submission('rules0003', [email('mallory@example.org')])), event_type: 'form_response_partial' });
    const partialAnswer = await deliver(connection.id, partial, sign(connection.secret, partial));
    expect(partialAnswer.status).toBe(422);
    expect(partialAnswer.body.details[0].field).toBe('event_type');
    expect(await count('SELECT count(*)::int AS n FROM decisions.consent_records')).toBe(before);
  });

  it('refuses a signed delivery it cannot store by the name of what is wrong, never with a 500, and keeps nothing', async () => {
    const { body: connection } = await create();
    const before = await count('SELECT count(*)::int AS n FROM decisions.consent_records');
    const people = await count('SELECT count(*)::int AS n FROM decisions.subjects');
    const refusedOn = async (raw: string) => {
      const answer = await deliver(connection.id, raw, sign(connection.secret, raw));
      return [answer.status, (answer.body.details ?? []).map((issue: { field: string }) => issue.field)];
    };
    // A NUL character, which PostgreSQL cannot store in text, in the hidden id or the e-mail answer.
    expect(await refusedOn(submission('nul0001', [email('nul@example.org')], { hidden: { crm_id: 'crm\u0000-1' } }))).toEqual([422, ['external_id']]);
    expect(await refusedOn(submission('nul0002', [email('nu\u0000l@example.org')]))).toEqual([422, ['email']]);
    // Nesting far deeper than any Typeform payload.
    const deep = submission('deep0001', [email('deep@example.org')]).replace('"answers"', `"variables":${'['.repeat(20000)}${']'.repeat(20000)},"answers"`);
    expect(await refusedOn(deep)).toEqual([422, ['form_response']]);
    // captured_at is Typeform's submitted_at: a time in the future is refused by its name in the delivery.
    expect(await refusedOn(submission('future0001', [email('future@example.org')], { submitted_at: '2099-01-01T00:00:00Z' }))).toEqual([422, ['form_response.submitted_at']]);
    // A time without its zone was read in the server's own zone, and 30 February recorded as 2 March.
    expect(await refusedOn(submission('nozone0001', [email('nozone@example.org')], { submitted_at: '2026-11-20T10:00:00' }))).toEqual([422, ['form_response.submitted_at']]);
    expect(await refusedOn(submission('feb300001', [email('feb30@example.org')], { submitted_at: '2026-02-30T10:00:00Z' }))).toEqual([422, ['form_response.submitted_at']]);
    expect(await count('SELECT count(*)::int AS n FROM decisions.consent_records')).toBe(before);
    expect(await count('SELECT count(*)::int AS n FROM decisions.subjects')).toBe(people);
  });

  it("answers a redelivery with its record even when the flow changed since, and still refuses another body under the token", async () => {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Typeform redelivery' });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const { body: connection } = await create({ flow_id: flow.body.id });
    const raw = submission('redeliver0001', [email('lin@example.org'), yesNo('newsletter_q', 'f_news', true), choice('analytics_yes')]);
    const first = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect(first.status).toBe(200);

    // The organisation adds a purpose to the flow: the mapping no longer covers it, but the response Typeform retries was recorded.
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/versions`, { purposes: [...NEWSLETTER_FLOW.purposes, 'ads'], purpose_definitions: { ...NEWSLETTER_FLOW.purpose_definitions, ads: { label: 'Ads', basis: 'consent' } } })).status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const again = await deliver(connection.id, raw, sign(connection.secret, raw));
    expect([again.status, again.body]).toEqual([200, { accepted: true, record_id: first.body.record_id }]);
    const changed = submission('redeliver0001', [email('lin@example.org'), yesNo('newsletter_q', 'f_news', false)]);
    const conflict = await deliver(connection.id, changed, sign(connection.secret, changed));
    expect([conflict.status, conflict.body.code]).toEqual([409, 'idempotency_conflict']);
    expect(conflict.body.details).toEqual([{ field: 'form_response.token', reason: expect.any(String) }]);
    // A new response submitted now is read with the version in force now, and refused by the purpose the mapping lacks.
    const fresh = submission('redeliver0002', [email('lin@example.org')], { submitted_at: new Date().toISOString() });
    const refused = await deliver(connection.id, fresh, sign(connection.secret, fresh));
    expect([refused.status, refused.body.details]).toEqual([422, [{ field: 'mapping.purposes.ads', reason: expect.any(String) }]]);
    expect(await count(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE $1`, [`typeform:${connection.id}:%`])).toBe(1);
  });

  /** The form after the organisation's second version: fraud is asked for as consent, and a question for ads. */
  const formWithAds = {
    ...TYPEFORM_FORM,
    fields: [
      ...TYPEFORM_FORM.fields.map((field) => (field.ref === 'fraud_q' ? { ...field, title: 'Run fraud checks on my account' } : field)),
      { id: 'f_ads', ref: 'ads_q', type: 'yes_no', title: 'Show me personalised ads', validations: { required: false } },
    ],
  };
  const recordOf = async (recordId: string) =>
    (await db.query('SELECT flow_version, purposes FROM decisions.consent_records WHERE record_id = $1', [recordId])).rows[0] as { flow_version: number; purposes: Record<string, { status: string }> };
  const statuses = (purposes: Record<string, { status: string }>) => Object.fromEntries(Object.entries(purposes).map(([key, value]) => [key, value.status]));

  it('decides a late delivery against the flow version in force at its submitted_at, as the Record API decides a record', async () => {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Typeform versions' });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const { body: connection } = await create({ flow_id: flow.body.id });
    // Submitted while version 1 (fraud an objection, no ads) was in force, delivered after version 2.
    const underVersion1 = new Date().toISOString();
    const version2 = await api('POST', `/api/v1/flows/${flow.body.id}/versions`, {
      purposes: [...NEWSLETTER_FLOW.purposes, 'ads'],
      purpose_definitions: { ...NEWSLETTER_FLOW.purpose_definitions, fraud: { label: 'Fraud prevention', basis: 'consent' }, ads: { label: 'Ads', basis: 'consent' } },
    });
    expect(version2.status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const remapped = await api('PUT', `${connections()}/${connection.id}/mapping`, { mapping: { ...MAPPING, purposes: { ...MAPPING.purposes, ads: { field: 'ads_q' } } }, form_definition: formWithAds });
    expect(remapped.status).toBe(200);

    const late = submission('inforce0001', [email('margaret@example.org'), yesNo('newsletter_q', 'f_news', true), choice('analytics_yes'), yesNo('fraud_q', 'f_fraud', true)], { submitted_at: underVersion1 });
    const lateAnswer = await deliver(connection.id, late, sign(connection.secret, late));
    expect(lateAnswer.status).toBe(200);
    // Version 1's purposes and bases: the yes to fraud_q was an objection then; ads was no purpose of it.
    const lateRecord = await recordOf(lateAnswer.body.record_id);
    expect(lateRecord.flow_version).toBe(1);
    expect(statuses(lateRecord.purposes)).toEqual({ newsletter: 'granted', analytics: 'granted', fraud: 'objected', billing: 'noticed' });
    await eventually(async () => (await api('GET', `/api/v1/consent_receipts/${lateAnswer.body.record_id}`)).status === 200);
    const receipt = (await api('GET', `/api/v1/consent_receipts/${lateAnswer.body.record_id}`)).body;
    expect(receipt.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id).sort()).toEqual(['analytics', 'newsletter']);

    // An answer to a question for a purpose the version in force did not have cannot be recorded against it: refused by name.
    const answeredAds = submission('inforce0002', [email('katherine@example.org'), yesNo('newsletter_q', 'f_news', true), yesNo('ads_q', 'f_ads', true)], { submitted_at: underVersion1 });
    const refused = await deliver(connection.id, answeredAds, sign(connection.secret, answeredAds));
    expect([refused.status, refused.body.details]).toEqual([422, [{ field: 'decisions.ads', reason: expect.stringMatching(/version 1 of the flow, in force at form_response\.submitted_at, has no purpose ads/) }]]);
    expect((await openApiConformance(us.url))('POST', '/hooks/typeform/{connection_id}', refused)).toEqual([true, null]);

    // Submitted now: version 2, its purposes and bases.
    const now = submission('inforce0003', [email('dorothy@example.org'), yesNo('newsletter_q', 'f_news', true), yesNo('fraud_q', 'f_fraud', true), yesNo('ads_q', 'f_ads', true)], {
      submitted_at: new Date().toISOString(),
    });
    const nowAnswer = await deliver(connection.id, now, sign(connection.secret, now));
    expect(nowAnswer.status).toBe(200);
    const nowRecord = await recordOf(nowAnswer.body.record_id);
    expect(nowRecord.flow_version).toBe(2);
    expect(statuses(nowRecord.purposes)).toEqual({ newsletter: 'granted', analytics: 'declined', fraud: 'granted', billing: 'noticed', ads: 'granted' });
    expect(await count(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE $1`, [`typeform:${connection.id}:%`])).toBe(2);
  });

  it('refuses by name a late delivery whose version in force decides a purpose the mapping no longer maps', async () => {
    const ads = { label: 'Ads', basis: 'consent' };
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
      ...NEWSLETTER_FLOW,
      name: 'Typeform dropped purpose',
      purposes: [...NEWSLETTER_FLOW.purposes, 'ads'],
      purpose_definitions: { ...NEWSLETTER_FLOW.purpose_definitions, ads },
    });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const { body: connection } = await create({ flow_id: flow.body.id, form_definition: formWithAds, mapping: { ...MAPPING, purposes: { ...MAPPING.purposes, ads: { field: 'ads_q' } } } });
    expect(connection.id).toMatch(/^fcn_us/);
    const underVersion1 = new Date().toISOString();
    // Version 2 drops the purpose, and the mapping is saved again without it.
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/versions`, { purposes: NEWSLETTER_FLOW.purposes, purpose_definitions: NEWSLETTER_FLOW.purpose_definitions })).status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    expect((await api('PUT', `${connections()}/${connection.id}/mapping`, { mapping: MAPPING, form_definition: formWithAds })).status).toBe(200);

    // Version 1 needs a decision on ads that the mapping has no question for: nothing is made up for it.
    const late = submission('dropped0001', [email('barbara@example.org'), yesNo('newsletter_q', 'f_news', true), yesNo('ads_q', 'f_ads', true)], { submitted_at: underVersion1 });
    const refused = await deliver(connection.id, late, sign(connection.secret, late));
    expect([refused.status, refused.body.details]).toEqual([422, [{ field: 'mapping.purposes.ads', reason: expect.stringMatching(/version 1 of the flow, in force at form_response\.submitted_at/) }]]);
    const now = submission('dropped0002', [email('barbara@example.org'), yesNo('newsletter_q', 'f_news', true)], { submitted_at: new Date().toISOString() });
    const recorded = await deliver(connection.id, now, sign(connection.secret, now));
    expect(recorded.status).toBe(200);
    expect((await recordOf(recorded.body.record_id)).flow_version).toBe(2);
    expect(await count(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE $1`, [`typeform:${connection.id}:%`])).toBe(1);
  });

  it('honours the previous secret for one day after a rotation, and refuses it after', async () => {
    const { body: connection } = await create();
    const rotated = await api('POST', `${connections()}/${connection.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^fcsec_/);
    expect(rotated.body.secret).not.toBe(connection.secret);
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(Math.abs(expires - (Date.now() + 24 * 3600_000))).toBeLessThan(60_000);

    const first = submission('rot0001', [email('ada@example.org'), yesNo('newsletter_q', 'f_news', true)]);
    expect((await deliver(connection.id, first, sign(connection.secret, first))).body).toMatchObject({ accepted: true, record_id: expect.any(String) });
    const second = submission('rot0002', [email('ada@example.org')]);
    expect((await deliver(connection.id, second, sign(rotated.body.secret, second))).status).toBe(200);

    // A day and a second later, as the database records it.
    await db.query(`UPDATE decisions.form_connections SET secret_rotated_at = now() - interval '24 hours 1 second' WHERE id = $1`, [connection.id]);
    const late = submission('rot0003', [email('ada@example.org')]);
    expect((await deliver(connection.id, late, sign(connection.secret, late))).status).toBe(401);
    expect((await deliver(connection.id, late, sign(rotated.body.secret, late))).status).toBe(200);
    expect((await api('GET', `${connections()}/${connection.id}`)).body.previous_secret_expires_at).toBeNull();

    const stored = (await db.query('SELECT * FROM decisions.form_connections WHERE id = $1', [connection.id])).rows[0];
    expect(JSON.stringify(stored)).not.toContain(connection.secret);
    expect(JSON.stringify(stored)).not.toContain(rotated.body.secret);
  });

  it("fetches the form from Typeform's API with a personal access token, and checks a new mapping again", async () => {
    const seen = typeform.requests.length;
    const created = await create({ form_definition: undefined, personal_access_token: 'tfp_good' });
    expect(created.status).toBe(201);
    expect(created.body.personal_access_token).toBe(true);
    expect(typeform.requests.slice(seen)).toEqual([{ path: `/forms/${FORM_ID}`, authorization: 'Bearer tfp_good' }]);
    const stored = (await db.query('SELECT * FROM decisions.form_connections WHERE id = $1', [created.body.id])).rows[0];
    expect(stored.access_token_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain('tfp_good');
    expect(JSON.stringify((await api('GET', `${connections()}/${created.body.id}`)).body)).not.toContain('tfp_good');

    const badToken = await create({ form_definition: undefined, personal_access_token: 'tfp_bad' });
    expect(badToken.status).toBe(422);
    expect(badToken.body.details[0].field).toBe('personal_access_token');
    // A token that cannot be a bearer credential is the caller's mistake, not Typeform's API being down.
    for (const token of ['tfp_good\r\nX-Other: 1', 'tfp good', 'tfp_gööd']) {
      const malformed = await create({ form_definition: undefined, personal_access_token: token });
      expect([malformed.status, malformed.body.details?.[0]?.field]).toEqual([422, 'personal_access_token']);
    }
    const unknownForm = await create({ form_definition: undefined, personal_access_token: 'tfp_good', form_id: 'Nope42' });
    expect(unknownForm.status).toBe(422);
    expect(unknownForm.body.details[0].field).toBe('form_id');

    const path = `${connections()}/${created.body.id}/mapping`;
    const refused = await api('PUT', path, { mapping: { ...MAPPING, purposes: { ...MAPPING.purposes, newsletter: { field: 'terms_q' } } } });
    expect(refused.status).toBe(422);
    expect(refused.body.details[0].field).toBe('mapping.purposes.newsletter');
    const before = typeform.requests.length;
    // The two consent questions swapped: the choice question now decides the newsletter, the yes/no one analytics.
    const swapped = { ...MAPPING, purposes: { ...MAPPING.purposes, newsletter: { field: 'analytics_q', choice: 'analytics_yes' }, analytics: { field: 'newsletter_q' } } };
    const updated = await api('PUT', path, { mapping: swapped });
    expect(updated.status).toBe(200);
    expect(updated.body.mapping).toEqual(swapped);
    expect(typeform.requests.length).toBe(before + 1);

    // The new mapping reads the next submission.
    const raw = submission('pat0001', [email('ada@example.org'), choice('analytics_yes')]);
    const delivered = await deliver(created.body.id, raw, sign(created.body.secret, raw));
    expect(delivered.status).toBe(200);
    const purposes = (await db.query('SELECT purposes FROM decisions.consent_records WHERE record_id = $1', [delivered.body.record_id])).rows[0].purposes;
    expect(purposes).toMatchObject({ newsletter: { status: 'granted' }, analytics: { status: 'declined' } });
  });

  it('scopes every read to its application, deletes, and puts every change on the audit trail', async () => {
    const { body: connection } = await create();
    const { applicationId: other, apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' });
    expect((await api('GET', `${connections()}/${connection.id}`, undefined, otherToken)).status).toBe(404);
    expect((await api('GET', `/api/v1/applications/${other}/form_connections/${connection.id}`, undefined, otherToken)).status).toBe(404);
    expect((await api('GET', `/api/v1/applications/${other}/form_connections`, undefined, otherToken)).body.data).toEqual([]);

    expect((await api('DELETE', `${connections()}/${connection.id}`)).status).toBe(204);
    expect((await api('GET', `${connections()}/${connection.id}`)).status).toBe(404);
    const raw = submission('gone0001', [email('ada@example.org')]);
    expect((await deliver(connection.id, raw, sign(connection.secret, raw))).status).toBe(404);

    const types = ['form_connection.created', 'form_connection.secret_rotated', 'form_connection.mapping_updated', 'form_connection.deleted'];
    await eventually(async () => {
      const trail = await api('GET', `/api/v1/applications/${applicationId}/audit?type=${types.join(',')}&limit=200`);
      return types.every((type) => trail.body.data.some((entry: { event_type: string }) => entry.event_type === type));
    });
  });

  it("lists an application's connections though they are more than one message on the bus carries", async () => {
    const model = await create();
    expect(model.status).toBe(201);
    const before = (await api('GET', `${connections()}?limit=200`)).body.data.length;
    const rows = [{ id: model.body.id as string }];
    // 300 more, each with a mapping as large as one of a flow with 100 purposes (about 5 KB listed): over 1 MiB in all.
    await db.query(
      `INSERT INTO decisions.form_connections (id, application_id, platform, form_id, flow_id, mapping, form_definition, secret_sealed, previous_secret_sealed, secret_rotated_at, access_token_sealed, created_at, updated_at)
       SELECT 'fcn_us' || lpad(g::text, 20, '0'), c.application_id, c.platform, 'form' || g, c.flow_id, c.mapping || jsonb_build_object('padding', repeat('m', 5000)),
              c.form_definition, c.secret_sealed, NULL, NULL, NULL, now() + g * interval '1 millisecond', now()
         FROM generate_series(1, 300) g, decisions.form_connections c WHERE c.id = $1`,
      [rows[0].id],
    );
    try {
      const { ids: listed } = await allPages(us.url, `${connections()}?limit=200`, apiToken);
      expect(listed).toHaveLength(before + 300);
      expect(new Set(listed).size).toBe(listed.length);
    } finally {
      await db.query(`DELETE FROM decisions.form_connections WHERE id LIKE 'fcn_us000000000000%' OR id = $1`, [model.body.id]);
    }
  }, 60000);

  it('documents the routes in the OpenAPI document', async () => {
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/applications/{application_id}/form_connections',
        '/api/v1/applications/{application_id}/form_connections/{connection_id}',
        '/api/v1/applications/{application_id}/form_connections/{connection_id}/mapping',
        '/api/v1/applications/{application_id}/form_connections/{connection_id}/rotate_secret',
        '/hooks/typeform/{connection_id}',
      ]),
    );
    expect(document.components.schemas).toHaveProperty('FormPurposeMappingDto');
    expect(document.paths['/hooks/typeform/{connection_id}'].post.description).toContain('an_account@example.com');
    // The hook is limited per sending address (the bucket's burst, 200 by default): a flood is answered 429 as documented.
    // The bucket refills at 20 a second here (RATE_LIMIT_RPS above), so 400 at once empty it however slow the machine
    // (at the default 100 a second, 260 took 1.2-2 s on a loaded 2-core machine and the bucket kept up).
    const raw = submission('flood0001', [email('flood@example.org')]);
    const flood = await Promise.all(Array.from({ length: 400 }, () => deliver('fcn_us00000000000000000000', raw, null)));
    const limited = flood.find((answer) => answer.status === 429);
    expect(limited?.headers.get('retry-after')).toEqual(expect.any(String));
    expect((await openApiConformance(us.url))('POST', '/hooks/typeform/{connection_id}', limited!)).toEqual([true, null]);
  });
});
