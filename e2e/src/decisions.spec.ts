import { createHash } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Client } from 'pg';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';
import { NEWSLETTER_FLOW } from '../support/fixtures';

/**
 * Flows and decisions end to end on two countries (in-process transport, real PostgreSQL): authoring
 * and versioning flows, opening sessions through both URL families, the participant walk with an
 * e-mailed one-time code, completion, the single-use consent token, and the outbox.
 */
describe('flows and decisions', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let publishableKey: string;

  const api = (method: string, path: string, body?: unknown, country = us) => http(country.url, method, path, { token: apiToken, body });
  /** Each session's participant proof, as its sign-in answered it: the steps after sign-in send it, as the page does. */
  const proofs = new Map<string, string>();
  const participant = async (token: string, step: string, body: unknown = {}, proof: string | undefined = proofs.get(token)) => {
    const answer = await http(us.url, 'POST', `/api/v1/decisions/${token}/${step}`, { body, headers: proof ? { 'x-participant-proof': proof } : {} });
    if (typeof answer.body?.participant_proof === 'string') proofs.set(token, answer.body.participant_proof);
    return answer;
  };

  /**
   * The decisions service's events of a type, as the country's audit trail holds them: the outbox
   * relays each event there and then deletes its row, so the trail is where an emitted event is kept.
   */
  async function trailEvents(country: RunningCountry, type: string): Promise<Array<{ type: string; data: Record<string, unknown>; actor: { type: string; id?: string } }>> {
    const client = new Client({ connectionString: country.database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT event_type AS type, payload AS data, actor FROM audit_chain.entries WHERE source = 'decisions' AND event_type = $1 ORDER BY leaf_index`,
        [type],
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  async function activeFlow(terms: Record<string, unknown>): Promise<string> {
    const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, terms);
    expect(created.status).toBe(201);
    const activated = await api('POST', `/api/v1/flows/${created.body.id}/activate`);
    expect(activated.status).toBe(200);
    return created.body.id;
  }

  /** Signs the person in with the code from the development mailbox and reaches reviewing. */
  async function signIn(token: string, email: string): Promise<void> {
    expect((await participant(token, 'transitions', { to: 'authenticating' })).status).toBe(200);
    const sent = await participant(token, 'sign_in', { email });
    expect(sent.status).toBe(200);
    const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
    expect(mail.status).toBe(200);
    const code = /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
    const verifying = await participant(token, 'transitions', { to: 'verifying', email, code });
    expect(verifying.status).toBe(200);
    expect(verifying.body.signed_in.email_hint).toBe(`${email[0]}…${email.split('@')[0].slice(-1)}@${email.split('@')[1]}`);
    expect((await participant(token, 'transitions', { to: 'reviewing' })).status).toBe(200);
  }

  const newsletterFlow = NEWSLETTER_FLOW;

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, env: { NODE_ENV: 'development' } });
    ({ us, de } = countries);
    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    publishableKey = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken })).body.key;
    await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, {
      token: adminToken,
      body: { allowed_origin: { origin: 'http://localhost' } },
    });
  });

  afterAll(async () => {
    await countries?.close();
  });

  it('documents the flows, decisions, participant and inbox endpoints in the OpenAPI document', async () => {
    const document = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    for (const path of [
      '/api/v1/applications/{application_id}/flows',
      '/api/v1/flows/{flow_id}',
      '/api/v1/flows/{flow_id}/activate',
      '/api/v1/flows/{flow_id}/versions',
      '/api/v1/decisions',
      '/api/v1/decisions/{session_token}',
      '/api/v1/decisions/{session_token}/transitions',
      '/api/v1/decisions/{session_token}/sign_in',
      '/api/v1/decisions/{session_token}/complete',
      '/api/v1/decisions/{session_token}/verify',
      '/api/v1/decisions/{session_token}/exchange',
      '/api/v1/consent_sessions/{session_token}/verify',
      '/api/v1/inbox',
    ]) {
      expect(Object.keys(document.paths)).toContain(path);
    }
    expect(document.paths['/api/v1/consent_sessions'].post.deprecated).toBe(true);
    expect(Object.keys(document.paths).some((path: string) => path.startsWith('/_dev'))).toBe(false);
    // What the participant routes answer, and their refusals, are in it.
    for (const step of ['transitions', 'complete', 'cancel']) {
      const responses = document.paths[`/api/v1/decisions/{session_token}/${step}`].post.responses;
      expect([step, Object.keys(responses)]).toEqual([step, expect.arrayContaining(['200', '409', '422'])]);
    }
    // A flow as answered validates against the document's FlowDto, optional terms left out (null) included.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: document.components });
    const validFlow = ajv.compile({ $ref: 'openapi.json#/components/schemas/FlowDto' });
    const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, { name: 'Bare', pattern: 'standard', purposes: ['newsletter'] });
    expect(created.body).toMatchObject({ description: null, jurisdiction: null, retention: null, revocation_policy: null });
    expect([validFlow(created.body), validFlow.errors]).toEqual([true, null]);
    expect(Object.keys(document.paths['/api/v1/flows/{flow_id}'].patch.responses)).toContain('409');
  });

  describe('flows', () => {
    it('refuses invalid terms with one 422 naming every field', async () => {
      const response = await api('POST', `/api/v1/applications/${applicationId}/flows`, {
        name: '',
        pattern: 'fancy',
        purposes: ['ok', 'Not A Key'],
        purpose_definitions: { ok: { basis: 'contract', mechanism: 'explicit' } },
        consent_duration: 'one year',
      });
      expect(response.status).toBe(422);
      const fields = response.body.details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'pattern', 'purposes[1]', 'purpose_definitions.ok.mechanism', 'consent_duration']));
    });

    it('keeps a draft editable, freezes it on activation, and versions it', async () => {
      const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, newsletterFlow);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: expect.stringMatching(/^flw_dev_[0-9a-z]{16}$/), version: 1, status: 'draft', capturable: true });
      expect(created.body.purpose_definitions.fraud).toMatchObject({ basis: 'legitimate_interest', mechanism: 'opt_out', takes_decision: true });
      expect(created.body.purpose_definitions.billing).toMatchObject({ basis: 'contract', mechanism: 'notice', takes_decision: false });
      const flowId = created.body.id;

      // A draft refuses sessions and its hosted page does not exist.
      const refused = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId });
      expect(refused.status).toBe(422);
      expect(refused.body.details).toEqual([{ field: 'flow_id', reason: 'flow is not active' }]);

      const patched = await api('PATCH', `/api/v1/flows/${flowId}`, { title: 'Stay in touch' });
      expect(patched.status).toBe(200);
      expect(patched.body.title).toBe('Stay in touch');
      expect(patched.body.terms_fingerprint).not.toBe(created.body.terms_fingerprint);

      const active = await api('POST', `/api/v1/flows/${flowId}/activate`);
      expect(active.body).toMatchObject({ status: 'active', version: 1, activated_at: expect.any(String) });
      const frozen = await api('PATCH', `/api/v1/flows/${flowId}`, { title: 'Changed' });
      expect(frozen.status).toBe(409);
      await eventually(async () => (await trailEvents(us, 'flow.activated')).some((e) => e.data.flow_id === flowId));

      const same = await api('POST', `/api/v1/flows/${flowId}/versions`, { title: 'Stay in touch' });
      expect(same.status).toBe(409);
      const v2 = await api('POST', `/api/v1/flows/${flowId}/versions`, { title: 'Stay in touch, again' });
      expect(v2.status).toBe(201);
      expect(v2.body).toMatchObject({ id: flowId, version: 2, status: 'draft' });

      // Until version 2 is activated, new sessions use version 1.
      const before = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId });
      expect(before.body.flow_version).toBe(1);
      await api('POST', `/api/v1/flows/${flowId}/activate`);
      expect((await api('GET', `/api/v1/flows/${flowId}?version=1`)).body.status).toBe('superseded');
      const after = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId });
      expect(after.body.flow_version).toBe(2);
      // The old session keeps the terms it was opened with.
      const oldView = await http(us.url, 'GET', `/api/v1/decisions/${before.body.session_token}`);
      expect(oldView.body.flow).toMatchObject({ version: 1, title: 'Stay in touch' });

      // Configuration reaches the other country.
      await eventually(async () => (await api('GET', `/api/v1/flows/${flowId}`, undefined, de)).body?.version === 2);
      const second = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...newsletterFlow, name: 'Second' });
      const first = await api('GET', `/api/v1/applications/${applicationId}/flows?limit=1`);
      expect(first.body.data.map((f: { id: string }) => f.id)).toEqual([second.body.id]);
      const rest = await api('GET', `/api/v1/applications/${applicationId}/flows?limit=1&cursor=${first.body.next_cursor}`);
      expect(rest.body.data[0]).toMatchObject({ id: flowId, version: 2, status: 'active' });

      // A version activated behind this decisions service's back (another replica, or the flow's home
      // country replicating): the version it remembers is refused at the insert, and new sessions,
      // alone or many at once, use the active one.
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query(`CREATE TEMP TABLE third ON COMMIT DROP AS SELECT * FROM "decisions"."flow_versions" WHERE "id" = $1 AND "version" = 2`, [flowId]);
        await client.query(`UPDATE third SET "version" = 3`);
        await client.query(`UPDATE "decisions"."flow_versions" SET "status" = 'superseded' WHERE "id" = $1 AND "version" = 2`, [flowId]);
        await client.query(`INSERT INTO "decisions"."flow_versions" SELECT * FROM third`);
        await client.query('COMMIT');
      } finally {
        await client.end();
      }
      const alone = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId });
      expect(alone.status).toBe(201);
      expect(alone.body.flow_version).toBe(3);
      const many = await Promise.all(Array.from({ length: 12 }, () => api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })));
      expect(many.map((answer) => [answer.status, answer.body.flow_version])).toEqual(many.map(() => [201, 3]));
    });
  });

  describe('consent on the standard path', () => {
    let flowId: string;
    beforeAll(async () => {
      flowId = await activeFlow(newsletterFlow);
    });

    it('walks sign-in, review and a grant, and the consent token verifies once', async () => {
      const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: 'http://localhost:5173' });
      expect(created.status).toBe(201);
      const token = created.body.session_token;
      expect(token).toMatch(/^dts_us[0-9a-z]{30}$/);
      expect(created.body).toMatchObject({ kind: 'consent', status: 'pending', decision_url: `${us.url}/decisions/${token}` });

      const view = await http(us.url, 'GET', `/api/v1/decisions/${token}`);
      expect(view.body).toMatchObject({ status: 'pending', path: 'standard', allowed_transitions: ['authenticating'], application: { id: applicationId, name: 'Acme' } });

      // Completing before reviewing is an illegal move, answered with the allowed next states.
      const early = await participant(token, 'complete', { outcome: 'granted' });
      expect(early.status).toBe(409);
      expect(early.body).toMatchObject({ code: 'illegal_transition', status: 'pending' });
      // The steps POST …/transitions takes from here, as its own 409 names them (ending is complete or cancel).
      expect(early.body.allowed).toEqual(view.body.allowed_transitions);

      await participant(token, 'transitions', { to: 'authenticating' });
      await participant(token, 'sign_in', { email: 'ada@example.com' });
      const wrong = await participant(token, 'transitions', { to: 'verifying', email: 'ada@example.com', code: '000000x' });
      expect(wrong.status).toBe(422);
      expect(wrong.body.details[0].field).toBe('code');
      const mail = await http(us.url, 'GET', '/_dev/mailbox?to=ada@example.com');
      const code = /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
      expect((await participant(token, 'transitions', { to: 'verifying', email: 'ada@example.com', code })).status).toBe(200);
      expect((await participant(token, 'transitions', { to: 'reviewing' })).status).toBe(200);

      const unknownPurpose = await participant(token, 'complete', { outcome: 'granted', purposes: { newsletter: true, analytics: false, billing: true } });
      expect(unknownPurpose.status).toBe(422);
      expect(unknownPurpose.body.details).toEqual([{ field: 'purposes.billing', reason: expect.stringContaining('notice-only') }]);
      // A list that leaves a consent purpose out grants nothing by silence: it names the one left out.
      const partial = await participant(token, 'complete', { outcome: 'granted', purposes: { newsletter: true } });
      expect([partial.status, partial.body.details]).toEqual([422, [{ field: 'purposes.analytics', reason: expect.stringContaining('must be decided') }]]);

      const done = await participant(token, 'complete', { outcome: 'granted', purposes: { newsletter: true, analytics: false, fraud: false } });
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ outcome: 'granted', exchange_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), completed_at: expect.any(String) });

      // Another application's token finds no such decision, and spends nothing: the owner's check below still wins.
      const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other', environment: 'sandbox' });
      const foreign = await http(us.url, 'GET', `/api/v1/decisions/${token}/verify?consent_token=${done.body.exchange_token}`, { token: otherToken });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ code: 'not_found', message: expect.stringContaining('Decision') });
      const foreignExchange = await http(us.url, 'POST', `/api/v1/decisions/${token}/exchange`, { token: otherToken, body: { exchange_token: done.body.exchange_token } });
      expect(foreignExchange.status).toBe(404);
      const unknown = await api('GET', `/api/v1/decisions/${token.slice(0, -4)}zzzz/verify?consent_token=${done.body.exchange_token}`);
      expect(unknown.status).toBe(404);
      // Bad query parameters are a 400 naming them, and spend nothing either.
      const withoutToken = await api('GET', `/api/v1/decisions/${token}/verify`);
      expect(withoutToken.status).toBe(400);
      expect(withoutToken.body).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field: 'consent_token' })] });
      const extra = await api('GET', `/api/v1/decisions/${token}/verify?consent_token=${done.body.exchange_token}&colour=red`);
      expect(extra.status).toBe(400);
      expect(extra.body.details).toEqual([expect.objectContaining({ field: 'colour' })]);

      const first = await http(us.url, 'GET', `/api/v1/consent_sessions/${token}/verify?consent_token=${done.body.exchange_token}`, { token: apiToken });
      expect(first.body).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
      expect(first.headers.get('deprecation')).toBe('@1763769600');
      expect(first.headers.get('sunset')).toBe('Fri, 31 Dec 2027 23:59:59 GMT');
      const replay = await http(us.url, 'GET', `/api/v1/decisions/${token}/verify?consent_token=${done.body.exchange_token}`, { token: apiToken });
      expect(replay.body).toEqual({ valid: false, status: 'expired' });
      const exchange = await api('POST', `/api/v1/decisions/${token}/exchange`, { exchange_token: done.body.exchange_token });
      expect(exchange.status).toBe(410);

      await eventually(async () => (await trailEvents(us, 'consent.granted')).length > 0);
      const granted = (await trailEvents(us, 'consent.granted')).pop()!;
      expect(granted.data).toMatchObject({
        flow_id: flowId,
        outcome: 'granted',
        purposes: { newsletter: 'granted', analytics: 'declined', fraud: 'objected', billing: 'noticed' },
      });
      expect(JSON.stringify(granted.data)).not.toContain(done.body.exchange_token);

      // A withdrawal moves the fulfilled decision to revoked and fires consent.revoked.
      const revoked = await participant(token, 'transitions', { to: 'revoked' });
      expect(revoked.body.status).toBe('revoked');
      await eventually(async () => (await trailEvents(us, 'consent.revoked')).length > 0);
    });


    it("opens, verifies and exchanges a session of another application of its account with an API token of that account, as the flow's application's", async () => {
      const sibling = await applicationWithToken(us, apiToken, { name: 'Acme outlet', environment: 'sandbox' });
      const asSibling = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: sibling.apiToken, body });
      const decided = async (email: string) => {
        const created = await asSibling('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'direct' });
        expect(created.status).toBe(201);
        const token: string = created.body.session_token;
        expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.application).toMatchObject({ id: applicationId });
        await signIn(token, email);
        const done = await participant(token, 'complete', { outcome: 'granted', purposes: { newsletter: true, analytics: false, fraud: false } });
        expect(done.status).toBe(200);
        return { token, exchangeToken: done.body.exchange_token as string };
      };
      const verifiedOne = await decided('hana@example.com');
      const verified = await asSibling('GET', `/api/v1/decisions/${verifiedOne.token}/verify?consent_token=${verifiedOne.exchangeToken}`);
      expect(verified.body).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
      // Spent once, for the account: the flow's own application's token finds it spent too.
      expect((await api('GET', `/api/v1/decisions/${verifiedOne.token}/verify?consent_token=${verifiedOne.exchangeToken}`)).body).toEqual({ valid: false, status: 'expired' });
      const exchangedOne = await decided('ivo@example.com');
      const exchanged = await asSibling('POST', `/api/v1/decisions/${exchangedOne.token}/exchange`, { exchange_token: exchangedOne.exchangeToken });
      expect([exchanged.status, exchanged.body.status]).toEqual([200, 'fulfilled']);
      // fraud, a legitimate interest, was objected to (false): the statuses say so, where the booleans cannot.
      expect([exchanged.body.claims.purposes, exchanged.body.claims.purpose_statuses]).toEqual([
        { newsletter: true, analytics: false, fraud: false, billing: false },
        { newsletter: 'granted', analytics: 'declined', fraud: 'objected', billing: 'noticed' },
      ]);
      expect((await asSibling('POST', `/api/v1/decisions/${exchangedOne.token}/exchange`, { exchange_token: exchangedOne.exchangeToken })).status).toBe(410);
    });
    it('exchanges the token for claims, attestations and credentials', async () => {
      // The person named as a list is refused naming the field (it was accepted).
      const listed = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: [{ email: 'grace@example.com' }] });
      expect([listed.status, listed.body.details?.map((d: { field: string }) => d.field)]).toEqual([422, ['subject']]);
      const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'grace@example.com' } });
      const token = created.body.session_token;
      // Only the named person may sign in.
      await participant(token, 'transitions', { to: 'authenticating' });
      const other = await participant(token, 'sign_in', { email: 'mallory@example.com' });
      expect(other.status).toBe(403);
      await http(us.url, 'POST', `/api/v1/decisions/${token}/cancel`, { body: {} }); // a fresh session below
      const again = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'grace@example.com' } })).body.session_token;
      await signIn(again, 'grace@example.com');
      const done = await participant(again, 'complete', { outcome: 'granted' });
      const exchange = await api('POST', `/api/v1/decisions/${again}/exchange`, { exchange_token: done.body.exchange_token });
      expect(exchange.status).toBe(200);
      expect(exchange.body).toMatchObject({
        status: 'fulfilled',
        outcome: 'granted',
        record_id: expect.stringMatching(/^rec_us[0-9a-z]{20}$/),
        claims: { flow_id: flowId, purposes: { newsletter: true, analytics: true }, subject: { email: 'grace@example.com' } },
        attestations: [{ type: 'email_verified', method: 'one_time_code' }],
        credentials: [],
      });
      const used = await http(us.url, 'GET', `/api/v1/decisions/${again}/verify?consent_token=${done.body.exchange_token}`, { token: apiToken });
      expect(used.body).toEqual({ valid: false, status: 'expired' });
    });

    it('lists the development mailbox newest first, no more than one message on the bus holds', async () => {
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        // 60 mails of 25 KB each (a receipt mail of a large flow): the newest 50 are 1.25 MB.
        for (let i = 0; i < 60; i++) {
          await client.query(`INSERT INTO decisions.dev_mailbox (id, to_address, subject, text, html, sent_at) VALUES ($1, 'big-mail@example.com', $2, 'text', $3, $4)`, [
            `mail_big_${String(i).padStart(3, '0')}`,
            `Mail ${i}`,
            'h'.repeat(25_000),
            new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
          ]);
        }
      } finally {
        await client.end();
      }
      const listed = await http(us.url, 'GET', '/_dev/mailbox?to=big-mail@example.com');
      expect(listed.status).toBe(200);
      expect(listed.body.data.length).toBeGreaterThan(10);
      expect(listed.body.data.length).toBeLessThan(50);
      expect(listed.body.data[0].subject).toBe('Mail 59');
    });

    it('keeps the session token nowhere in the decisions tables, only its hash (a credential, like every other)', async () => {
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'plain@example.com' } })).body.session_token;
      await signIn(token, 'plain@example.com');
      expect((await participant(token, 'complete', { outcome: 'granted' })).status).toBe(200);
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        // Every text and JSON column of the tables that held it (the sessions and the sign-in codes).
        const { rows: columns } = await client.query(
          `SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = 'decisions' AND table_name IN ('decision_sessions', 'sign_in_codes') AND data_type IN ('text', 'character varying', 'jsonb', 'json')`,
        );
        expect(columns.length).toBeGreaterThan(10);
        const holding: string[] = [];
        for (const { table_name: table, column_name: column } of columns) {
          const { rows } = await client.query(`SELECT count(*)::int AS n FROM decisions."${table}" WHERE strpos("${column}"::text, $1) > 0`, [token]);
          if (rows[0].n > 0) holding.push(`${table}.${column}`);
        }
        expect(holding).toEqual([]);
        // Its hash, as every credential is kept, finds the session.
        const { rows } = await client.query(`SELECT status FROM decisions.decision_sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [token]);
        expect(rows).toEqual([{ status: 'fulfilled' }]);
      } finally {
        await client.end();
      }
    });

    it('limits code attempts and expires codes and consent tokens', async () => {
      const sql = async (text: string, values: unknown[]) => {
        const client = new Client({ connectionString: us.database.url });
        await client.connect();
        try {
          return (await client.query(text, values)).rowCount;
        } finally {
          await client.end();
        }
      };
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      await participant(token, 'transitions', { to: 'authenticating' });
      await participant(token, 'sign_in', { email: 'tries@example.com' });
      for (let i = 0; i < 5; i++) {
        const wrong = await participant(token, 'transitions', { to: 'verifying', email: 'tries@example.com', code: '99999999' });
        expect(wrong.status).toBe(422);
      }
      const code = /\b(\d{6})\b/.exec((await http(us.url, 'GET', '/_dev/mailbox?to=tries@example.com')).body.data[0].text)![1];
      const locked = await participant(token, 'transitions', { to: 'verifying', email: 'tries@example.com', code });
      expect(locked.status).toBe(422);
      expect(locked.body.details[0].reason).toContain('too many attempts');

      // A fresh code works until it expires (moved into the past here).
      await participant(token, 'sign_in', { email: 'tries@example.com' });
      await sql(`UPDATE decisions.sign_in_codes SET expires_at = now() - interval '1 second' WHERE session_id = (SELECT id FROM decisions.decision_sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex'))`, [token]);
      const fresh = /\b(\d{6})\b/.exec((await http(us.url, 'GET', '/_dev/mailbox?to=tries@example.com')).body.data[0].text)![1];
      const expired = await participant(token, 'transitions', { to: 'verifying', email: 'tries@example.com', code: fresh });
      expect(expired.body.details[0].reason).toContain('expired');

      // A consent token older than five minutes verifies as expired.
      const other = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      await signIn(other, 'tries2@example.com');
      const done = await participant(other, 'complete', { outcome: 'granted' });
      expect(await sql(`SELECT 1 FROM decisions.decision_sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex') AND consent_token_expires_at BETWEEN now() + interval '4 minutes 50 seconds' AND now() + interval '5 minutes'`, [other])).toBe(1);
      await sql(`UPDATE decisions.decision_sessions SET consent_token_expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [other]);
      const old = await http(us.url, 'GET', `/api/v1/decisions/${other}/verify?consent_token=${done.body.exchange_token}`, { token: apiToken });
      expect(old.body).toEqual({ valid: false, status: 'expired' });
      // The database holds only the token's hash.
      expect(await sql(`SELECT 1 FROM decisions.decision_sessions WHERE consent_token_hash = encode(sha256($1::bytea), 'hex')`, [done.body.exchange_token])).toBe(1);
    });

    it('declines in redirect mode onto redirect_uri?error=access_denied', async () => {
      const created = await api('POST', '/api/v1/decisions', {
        kind: 'consent',
        flow_id: flowId,
        delivery_mode: 'redirect',
        redirect_uri: 'http://localhost:3000/done?step=2',
      });
      const token = created.body.session_token;
      await signIn(token, 'linus@example.com');
      const declined = await participant(token, 'complete', { outcome: 'denied' });
      expect(declined.body).toMatchObject({ outcome: 'declined', redirect_to: 'http://localhost:3000/done?step=2&error=access_denied' });
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('expired');
      await eventually(async () => (await trailEvents(us, 'consent.denied')).length > 0);

      const success = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'redirect', redirect_uri: 'http://localhost:3000/done' })).body.session_token;
      await signIn(success, 'linus@example.com');
      expect((await participant(success, 'complete', { outcome: 'granted' })).body.redirect_to).toBe('http://localhost:3000/done');

      // A redirect_uri with a fragment: the error goes into the query, where the server reads it.
      for (const [given, expected] of [
        ['http://localhost:3000/back#section', 'http://localhost:3000/back?error=access_denied#section'],
        ['http://localhost:3000/back?x=1#s', 'http://localhost:3000/back?x=1&error=access_denied#s'],
      ]) {
        const fragment = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'redirect', redirect_uri: given })).body.session_token;
        await signIn(fragment, 'linus@example.com');
        const answer = (await participant(fragment, 'complete', { outcome: 'denied' })).body.redirect_to;
        expect([given, answer]).toEqual([given, expected]);
        expect(new URL(answer).searchParams.get('error')).toBe('access_denied');
      }
    });

    it('refuses origins the application did not register, and accepts a publishable key from one it did', async () => {
      const bad = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, embed_origin: 'https://evil.example', redirect_uri: 'https://evil.example/x' });
      expect(bad.status).toBe(422);
      expect(bad.body.details.map((d: { field: string }) => d.field)).toEqual(['embed_origin', 'redirect_uri']);
      // Not an origin at all is said as such, not as an unregistered one.
      const slash = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, embed_origin: 'http://localhost:8080/' });
      expect([slash.status, slash.body.details]).toEqual([422, [{ field: 'embed_origin', reason: 'is not an origin (scheme://host[:port]): origin must not end with a slash' }]]);

      const browser = await http(us.url, 'POST', '/api/v1/consent_sessions', {
        headers: { 'x-publishable-key': publishableKey, origin: 'http://localhost:8080' },
        body: { flow_id: flowId, delivery_mode: 'embed', embed_origin: 'http://localhost:8080' },
      });
      expect(browser.status).toBe(201);
      expect(browser.headers.get('deprecation')).toBe('@1763769600');
      expect(browser.headers.get('link')).toContain('successor-version');
      expect(browser.body.embed_url).toBe(`${us.url}/decisions/${browser.body.session_token}/embed`);
      // A public key opens consent sessions only: an approval's wording is the organisation's server's word.
      const approval = await http(us.url, 'POST', '/api/v1/decisions', {
        headers: { 'x-publishable-key': publishableKey, origin: 'http://localhost:8080' },
        body: { kind: 'approval', subject: { email: 'victim@example.com' }, approval: { title: 'Approve wire transfer', action: 'payments.create', trigger: 'value', value: { amount: 1000000, currency: 'EUR' } } },
      });
      expect([approval.status, approval.body.code, approval.body.details]).toEqual([403, 'forbidden', [{ field: 'kind', reason: 'must be consent with a publishable key' }]]);
      const consent = await http(us.url, 'POST', '/api/v1/decisions', { headers: { 'x-publishable-key': publishableKey, origin: 'http://localhost:8080' }, body: { kind: 'consent', flow_id: flowId } });
      expect(consent.status).toBe(201);
      // Minted through the old family, it resolves under the new one too.
      const view = await http(us.url, 'GET', `/api/v1/decisions/${browser.body.session_token}`);
      expect(view.body).toMatchObject({ kind: 'consent', delivery_mode: 'embed', embed_origin: 'http://localhost:8080' });
      expect((await http(us.url, 'GET', `/api/v1/consent_sessions/${browser.body.session_token}`)).status).toBe(200);
    });

    it("counts a session's dropped-message reports up to 200 in all, so a session token cannot drive the alerting counter", async () => {
      const dropped = async () => {
        const line = ((await http(us.url, 'GET', '/metrics')).body as string).split('\n').find((l) => l.startsWith('trust_surface_postmessage_dropped_total{') && l.includes('reason="origin_missing"'));
        return line ? Number(line.trim().split(/\s+/).pop()) : 0;
      };
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      const before = await dropped();
      for (const count of [150, 1000, 1000]) {
        expect((await participant(token, 'frame_events', { type: 'postmessage_dropped', reason: 'origin_missing', count })).status).toBe(204);
      }
      expect((await dropped()) - before).toBe(200);
      // Another session has its own budget.
      const other = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      expect((await participant(other, 'frame_events', { type: 'postmessage_dropped', reason: 'origin_missing' })).status).toBe(204);
      expect((await dropped()) - before).toBe(201);
    });

    it('takes no address at all for an hour once five wrong ones were tried, so the link does not tell whom the request is for', async () => {
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'target7@example.com' } })).body.session_token;
      expect((await participant(token, 'transitions', { to: 'authenticating' })).status).toBe(200);
      for (const n of [1, 2, 3, 4, 5]) {
        const guess = await participant(token, 'sign_in', { email: `target${n}@example.com` });
        expect([guess.status, guess.body.details]).toEqual([403, [{ field: 'email', reason: 'not the person this request is for' }]]);
      }
      // The sixth try is refused whatever the address, the right one included, and a verify attempt with a guess too.
      for (const email of ['target6@example.com', 'target7@example.com']) {
        const late = await participant(token, 'sign_in', { email });
        expect([late.status, late.body.code, late.headers.get('retry-after')]).toEqual([429, 'rate_limited', '3600']);
      }
      expect((await participant(token, 'transitions', { to: 'verifying', email: 'target8@example.com', code: '123456' })).status).toBe(429);
      // Another session to the same person is not affected.
      const other = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'target7@example.com' } })).body.session_token;
      expect((await participant(other, 'transitions', { to: 'authenticating' })).status).toBe(200);
      expect((await participant(other, 'sign_in', { email: 'target7@example.com' })).status).toBe(200);
    });

    it('answers a session of another country with its home country only', async () => {
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      const elsewhere = await http(de.url, 'GET', `/api/v1/decisions/${token}`);
      expect(elsewhere.status).toBe(421);
      expect(elsewhere.body).toEqual({ message: expect.any(String), code: 'wrong_country', home_country: 'US', request_id: expect.any(String) });
      expect((await http(us.url, 'GET', `/api/v1/decisions/dts_us${'0'.repeat(30)}`)).status).toBe(404);
    });

    it('leaves no address of a person homed elsewhere who signs in on a session here', async () => {
      const email = 'homed-in-de@example.com';
      expect((await http(de.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, { token: apiToken, body: { email } })).status).toBe(201);
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      expect((await participant(token, 'transitions', { to: 'authenticating' })).status).toBe(200);
      expect((await participant(token, 'sign_in', { email })).status).toBe(200);
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
      const code = /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
      const verifying = await participant(token, 'transitions', { to: 'verifying', email, code });
      expect([verifying.status, verifying.body.code, verifying.body.home_country]).toEqual([421, 'wrong_country', 'DE']);
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT email, email_digest FROM decisions.sign_in_codes WHERE session_id = (SELECT id FROM decisions.decision_sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex'))`, [token]);
        expect(rows).toEqual([{ email: null, email_digest: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
        const anywhere = await client.query(`SELECT count(*)::int AS n FROM decisions.sign_in_codes WHERE email IS NOT NULL`);
        expect(anywhere.rows[0].n).toBe(0);
      } finally {
        await client.end();
      }
    });

    it('expires a session at its deadline', async () => {
      const deadline = new Date(Date.now() + 1500).toISOString();
      const created = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, deadline_at: deadline })).body;
      const token = created.session_token;
      // The sweep ends it without anyone opening it: its expiry reaches the outbox on its own.
      const view = await http(us.url, 'GET', `/api/v1/decisions/${token}`);
      expect(view.body.status).toBe('pending');
      const ended = async () =>
        (await trailEvents(us, 'decision.state_changed')).some((e) => e.data.to === 'expired' && (e.data.actor as { type: string }).type === 'system' && e.data.from === 'pending' && e.data.flow_id === flowId);
      await eventually(ended, 8000);
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('expired');
      const late = await participant(token, 'transitions', { to: 'authenticating' });
      expect(late.status).toBe(409);
    });
  });

  describe('hosted pages', () => {
    it('frames the embed page for, and posts to, its embed origin only while the application still allows it', async () => {
      const shop = (await http(us.url, 'POST', '/api/v1/applications', { token: adminToken, body: { name: 'Shop', environment: 'sandbox' } })).body.id;
      const origins = `/api/v1/applications/${shop}/allowed_origins`;
      expect((await http(us.url, 'POST', origins, { token: adminToken, body: { allowed_origin: { origin: 'https://gone.example' } } })).status).toBe(201);
      const shopToken = (await http(us.url, 'POST', `/api/v1/applications/${shop}/api_tokens`, { token: adminToken, body: {} })).body.token;
      const shopFlow = await http(us.url, 'POST', `/api/v1/applications/${shop}/flows`, { token: shopToken, body: { ...newsletterFlow, name: 'Embed origin' } });
      expect((await http(us.url, 'POST', `/api/v1/flows/${shopFlow.body.id}/activate`, { token: shopToken })).status).toBe(200);
      const created = await http(us.url, 'POST', '/api/v1/decisions', {
        token: shopToken,
        body: { kind: 'consent', flow_id: shopFlow.body.id, delivery_mode: 'embed', embed_origin: 'https://gone.example' },
      });
      expect(created.status).toBe(201);
      const token = created.body.session_token;
      expect((await fetch(`${us.url}/decisions/${token}/embed`)).headers.get('content-security-policy')).toContain('frame-ancestors https://gone.example');
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.embed_origin).toBe('https://gone.example');

      expect((await http(us.url, 'DELETE', `${origins}/${encodeURIComponent('https://gone.example')}`, { token: adminToken })).status).toBe(204);
      // Taken off the list: the page frames for nobody and the frame posts to nobody (its messages are dropped and counted).
      const page = await fetch(`${us.url}/decisions/${token}/embed`);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(await page.text()).not.toContain('gone.example');
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.embed_origin).toBeNull();
    });

    it('talks to the page that frames it when a session was made without embed_origin, if that page is an allowed origin', async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'No embed origin' });
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'embed' })).body.session_token;
      const framed = async (referer?: string) => {
        const html = await (await fetch(`${us.url}/decisions/${token}/embed`, { headers: referer ? { referer } : {} })).text();
        const view = JSON.parse(/<script[^>]*type="application\/json"[^>]*>([\s\S]*?)<\/script>/.exec(html)![1]);
        return view.embed_origin ?? view.view?.embed_origin ?? null;
      };
      // The application allows http://localhost (any port, sandbox): a shop page there gets the frame's messages.
      expect(await framed('http://localhost:5173/checkout?step=2')).toBe('http://localhost:5173');
      // Anyone else, or no referrer: nobody (the messages are dropped and counted).
      expect(await framed('https://evil.example/page')).toBeNull();
      expect(await framed()).toBeNull();
      // The participant API does not guess: it answers what the session was made with.
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.embed_origin).toBeNull();
    });

    it('renders the decision page server-side, in English or German, with a strict CSP', async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Pages', title: 'Stay <in> touch' });
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: 'http://localhost:5173' })).body.session_token;
      const page = await fetch(`${us.url}/decisions/${token}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const html = await page.text();
      expect(html).toContain('<html lang="en"');
      expect(html).toContain('Stay &lt;in&gt; touch');
      expect(html).not.toContain('Stay <in> touch');
      expect(html).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/);

      const german = await fetch(`${us.url}/decisions/${token}/embed`, { headers: { 'accept-language': 'de-DE,de;q=0.9' } });
      expect(await german.text()).toContain('<html lang="de"');
      expect(german.headers.get('content-security-policy')).toContain('frame-ancestors http://localhost:5173');

      const script = html.match(/<script[^>]*src="([^"]+participant\.js)"[^>]*integrity="([^"]+)"/);
      expect(script).not.toBeNull();
      const asset = await fetch(`${us.url}${script![1]}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      const digest = require('node:crypto').createHash('sha384').update(Buffer.from(await asset.arrayBuffer())).digest('base64');
      expect(script![2]).toBe(`sha384-${digest}`);
    });

    it('publishes the frame protocol schemas byte for byte', async () => {
      const { readFileSync } = require('node:fs');
      const { schemaPath } = require('@dcr/frame-protocol');
      for (const name of ['envelope', 'consent/state', 'approval/complete']) {
        const answer = await fetch(`${us.url}/schemas/frame/v2/${name}.json`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
        expect(Buffer.from(await answer.arrayBuffer()).equals(readFileSync(schemaPath(name)))).toBe(true);
      }
      expect((await fetch(`${us.url}/schemas/frame/v2/nothing.json`)).status).toBe(404);
    });

    it('serves the hosted flow page for active flows only', async () => {
      const draft = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...newsletterFlow, name: 'Draft page' });
      expect((await fetch(`${us.url}/accord/${draft.body.id}`, { redirect: 'manual' })).status).toBe(404);
      expect((await fetch(`${us.url}/accord/some-old-id`, { redirect: 'manual' })).status).toBe(410);
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Live page' });
      const address = `${us.url}/accord/${flowId}?redirect_uri=${encodeURIComponent('http://localhost:3000/back')}`;
      // A GET opens nothing (link scanners and prefetches follow links): it answers the page whose form opens the session.
      const sessionsOfFlow = async () => {
        const client = new Client({ connectionString: us.database.url });
        await client.connect();
        try {
          return Number((await client.query(`SELECT count(*) FROM "decisions"."decision_sessions" WHERE "flow_id" = $1`, [flowId])).rows[0].count);
        } finally {
          await client.end();
        }
      };
      const page = await fetch(address, { redirect: 'manual' });
      expect([page.status, page.headers.get('content-type'), page.headers.get('cache-control')]).toEqual([200, 'text/html; charset=utf-8', 'no-store']);
      const html = await page.text();
      expect(html).toContain(`<form id="flow-open-form" method="post" action="/accord/${flowId}?redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fback"`);
      expect((await fetch(address, { method: 'HEAD', redirect: 'manual' })).status).toBe(200);
      expect(await sessionsOfFlow()).toBe(0);
      // The form (sent by the page's script, or by the person without one): a 303 to the decision page.
      const opened = await fetch(address, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
      expect(opened.status).toBe(303);
      expect(await sessionsOfFlow()).toBe(1);
      const location = opened.headers.get('location')!;
      expect(location).toMatch(new RegExp(`^${us.url}/decisions/dts_us[0-9a-z]{30}$`));
      const token = location.split('/').pop()!;
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body).toMatchObject({ delivery_mode: 'redirect', redirect_uri: 'http://localhost:3000/back' });
      for (const method of ['GET', 'POST']) {
        const foreign = await fetch(`${us.url}/accord/${flowId}?redirect_uri=${encodeURIComponent('https://evil.example/')}`, { method, redirect: 'manual' });
        expect([method, foreign.status]).toEqual([method, 400]);
        expect([method, (await fetch(`${us.url}/accord/${draft.body.id}`, { method, redirect: 'manual' })).status]).toEqual([method, 404]);
      }
      expect((await fetch(`${de.url}/decisions/${token}`)).status).toBe(421);
    });
  });

  describe('Idempotency-Key', () => {
    const post = (path: string, body: unknown, key: string, token: string | undefined = apiToken) =>
      http(us.url, 'POST', path, { token, body, headers: { 'idempotency-key': key } });

    it('replays the first answer for the same request and refuses a different one', async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Idempotent' });
      const body = { kind: 'consent', flow_id: flowId };
      const first = await post('/api/v1/decisions', body, 'create-1');
      const again = await post('/api/v1/decisions', body, 'create-1');
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      const other = await post('/api/v1/decisions', { ...body, locale: 'de' }, 'create-1');
      expect(other.status).toBe(409);
      expect(other.body.code).toBe('idempotency_conflict');
      // It names the header it refuses, as the Record API's body key names idempotency_key (it named nothing).
      expect(other.body.details?.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key']);

      const invalid = await post('/api/v1/decisions', { kind: 'consent' }, 'create-2');
      const invalidAgain = await post('/api/v1/decisions', { kind: 'consent' }, 'create-2');
      expect([invalid.status, invalidAgain.status]).toEqual([422, 422]);
      expect(invalidAgain.body.details).toEqual(invalid.body.details);

      // The admin token's requests are idempotent too.
      const adminApp = await post('/api/v1/applications', { name: 'Once', environment: 'sandbox' }, 'admin-1', adminToken);
      const adminAgain = await post('/api/v1/applications', { name: 'Once', environment: 'sandbox' }, 'admin-1', adminToken);
      expect(adminAgain.headers.get('idempotent-replayed')).toBe('true');
      expect(adminAgain.body.id).toBe(adminApp.body.id);

      const badKey = await post('/api/v1/decisions', body, 'x'.repeat(256));
      expect(badKey.status).toBe(400);
      expect(badKey.body.details).toEqual([{ field: 'Idempotency-Key', reason: expect.any(String) }]);
    });

    it('authenticates before it claims a key: a refused caller keeps nothing under it', async () => {
      const keys = async () => {
        const client = new Client({ connectionString: us.database.url });
        await client.connect();
        try {
          return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM gateway.idempotency_keys')).rows[0].n;
        } finally {
          await client.end();
        }
      };
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Refused first' });
      const before = await keys();
      const refused = await post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'refused-1', 'not-a-valid-token');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('idempotent-replayed')).toBeNull();
      const again = await post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'refused-1', 'not-a-valid-token');
      expect(again.status).toBe(401);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      // A valid credential this route does not accept (the admin token) has a key scope of its own:
      // claimed before authentication, its 403 would be kept and replayed.
      const forbidden = await post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'refused-1', adminToken);
      const forbiddenAgain = await post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'refused-1', adminToken);
      expect([forbidden.status, forbiddenAgain.status]).toEqual([403, 403]);
      expect(forbiddenAgain.headers.get('idempotent-replayed')).toBeNull();
      expect(await keys()).toBe(before);
      const accepted = await post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'refused-1');
      expect(accepted.status).toBe(201);
      expect(await keys()).toBe(before + 1);
    });

    it('creates one session for concurrent duplicates', async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Concurrent' });
      const answers = await Promise.all(Array.from({ length: 6 }, () => post('/api/v1/decisions', { kind: 'consent', flow_id: flowId }, 'burst-1')));
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.session_token)).size).toBe(1);
      for (const answer of answers.filter((a) => a.status !== 201)) {
        expect(answer.status).toBe(409);
        expect(answer.body.code).toBe('idempotency_conflict');
        expect(answer.body.details?.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key']);
      }
    });

    it('makes a retried completion return the same consent token', async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Retry', pattern: 'informed' });
      const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
      await participant(token, 'transitions', { to: 'informed' });
      await participant(token, 'transitions', { to: 'evidenced' });
      const first = await post(`/api/v1/decisions/${token}/complete`, { outcome: 'granted' }, 'complete-1', undefined);
      const retry = await post(`/api/v1/decisions/${token}/complete`, { outcome: 'granted' }, 'complete-1', undefined);
      expect(first.status).toBe(200);
      expect(retry.status).toBe(200);
      expect(retry.body.exchange_token).toBe(first.body.exchange_token);
      // The kept answer is sealed with a key derived from the Idempotency-Key, which is stored only as a hash.
      const client = new Client({ connectionString: us.database.url });
      await client.connect();
      const { rows } = await client.query('SELECT key_hash, response_body FROM gateway.idempotency_keys');
      // The request's fingerprint is keyed (a body may name a person): not the plain digest of the request.
      const fingerprints = (await client.query('SELECT fingerprint FROM gateway.idempotency_keys')).rows.map((row: { fingerprint: string }) => row.fingerprint);
      await client.end();
      const plain = createHash('sha256').update(`POST\n/api/v1/decisions/${token}/complete\n{"outcome":"granted"}`).digest('hex');
      expect(fingerprints.length).toBeGreaterThan(0);
      expect(fingerprints).not.toContain(plain);
      expect(rows.length).toBeGreaterThan(0);
      expect(JSON.stringify(rows)).not.toContain(first.body.exchange_token);
      expect(JSON.stringify(rows)).not.toContain('complete-1');
      // Without the key, a second completion is an illegal move.
      expect((await participant(token, 'complete', { outcome: 'granted' })).status).toBe(409);
    });
  });

  describe('inbox', () => {
    const person = 'inbox-person@example.com';
    const approval = { title: 'Approve the refund', action: 'refunds.create', trigger: 'value', value: { amount: 4200, currency: 'EUR' } };
    let tokens: { consent: string; soon: string; scope: string };

    async function code(email: string): Promise<string> {
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
      return /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
    }

    beforeAll(async () => {
      const flowId = await activeFlow({ ...newsletterFlow, name: 'Inbox flow', title: 'Join the newsletter' });
      const open = async (body: Record<string, unknown>) => (await api('POST', '/api/v1/decisions', { subject: { email: person }, ...body })).body.session_token;
      tokens = {
        consent: await open({ kind: 'consent', flow_id: flowId, deadline_at: new Date(Date.now() + 3600_000).toISOString() }),
        soon: await open({ kind: 'approval', approval, deadline_at: new Date(Date.now() + 600_000).toISOString() }),
        scope: await open({ kind: 'approval', approval: { ...approval, title: 'Grant a wider scope', trigger: 'scope' } }),
      };
      await open({ kind: 'approval', approval, subject: { email: 'someone-else@example.com' } });
    });

    it('lists the pending requests of the signed-in person, filtered, sorted and paged', async () => {
      expect((await http(us.url, 'GET', '/api/v1/inbox')).status).toBe(401);
      expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: person } })).status).toBe(200);
      const wrong = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email: person, code: 'nope' } });
      expect(wrong.status).toBe(422);
      // The code mail in the language asked for in the body, as a session's sign-in takes it.
      expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: 'deutsch@example.com', locale: 'de' } })).status).toBe(200);
      expect((await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent('deutsch@example.com')}`)).body.data[0].subject).toMatch(/^Ihr Anmeldecode/);
      expect((await http(us.url, 'POST', '/api/v1/inbox/sign_in', { body: { email: 'deutsch@example.com', locale: 'german' } })).body.details?.[0]?.field).toBe('locale');
      // An address that asked for no code is answered as a wrong code is: the answer does not tell whether its owner asked for one.
      const none = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email: 'asked-for-nothing@example.com', code: '123456' } });
      expect([none.status, none.body.details]).toEqual([422, wrong.body.details]);
      const session = await http(us.url, 'POST', '/api/v1/inbox/session', { body: { email: person, code: await code(person) } });
      expect(session.status).toBe(201);
      const inbox = (query = '') => http(us.url, 'GET', `/api/v1/inbox${query}`, { headers: { authorization: `Bearer ${session.body.inbox_token}` } });

      const all = await inbox();
      expect(all.status).toBe(200);
      // Soonest deadline first; requests without a deadline last.
      expect(all.body.data.map((i: { session_token: string }) => i.session_token)).toEqual([tokens.soon, tokens.consent, tokens.scope]);
      expect(all.body.data[1]).toMatchObject({
        kind: 'consent',
        title: 'Join the newsletter',
        application: { id: applicationId, name: 'Acme' },
        decision_url: `${us.url}/decisions/${tokens.consent}`,
      });
      expect((await inbox('?sort=newest')).body.data.map((i: { session_token: string }) => i.session_token)).toEqual([tokens.scope, tokens.soon, tokens.consent]);
      expect((await inbox('?kind=approval')).body.data).toHaveLength(2);
      expect((await inbox('?kind=approval&trigger=scope')).body.data.map((i: { title: string }) => i.title)).toEqual(['Grant a wider scope']);
      expect((await inbox('?application_id=tp_dev_0000000000000000')).body.data).toEqual([]);
      const first = await inbox('?limit=2');
      const second = await inbox(`?limit=2&cursor=${first.body.next_cursor}`);
      expect([...first.body.data, ...second.body.data].map((i: { session_token: string }) => i.session_token)).toEqual([tokens.soon, tokens.consent, tokens.scope]);
      expect(second.body.next_cursor).toBeNull();
      // The cursor names a position by the session's public id, not by its token (a credential).
      const position = Buffer.from(first.body.next_cursor, 'base64url').toString('utf8');
      expect(position).not.toContain(tokens.consent);
      expect(JSON.parse(position)).toEqual({ k: expect.any(String), i: expect.stringMatching(/^dcs_/) });
      expect((await inbox('?sort=oldest')).status).toBe(400);

      // Requests without a deadline are sorted by when they expire, and paging goes past them (a cursor
      // on one of them was refused as "not valid", leaving every later request out of reach).
      const later = (await api('POST', '/api/v1/decisions', { subject: { email: person }, kind: 'approval', approval: { ...approval, title: 'Later' } })).body.session_token;
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { data: Array<{ session_token: string }>; next_cursor: string | null } } = await inbox(`?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        paged.push(...page.body.data.map((item) => item.session_token));
        cursor = page.body.next_cursor;
      } while (cursor && paged.length < 10);
      expect(paged).toEqual([tokens.soon, tokens.consent, tokens.scope, later]);
      expect((await participant(later, 'cancel', { reason: 'done with the test' })).status).toBe(200);
    });

    it('renders the same list as a page after signing in with plain forms', async () => {
      const start = await fetch(`${us.url}/inbox`);
      expect(await start.text()).toContain('id="inbox-sign-in"');
      const form = (path: string, fields: Record<string, string>) =>
        fetch(`${us.url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
      const codePage = await form('/inbox/sign_in', { email: person });
      expect(await codePage.text()).toContain('id="inbox-code-form"');
      const opened = await form('/inbox/session', { email: person, code: await code(person) });
      expect(opened.status).toBe(303);
      const cookie = opened.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^service_inbox=inb_[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
      const page = await fetch(`${us.url}/inbox?kind=approval`, { headers: { cookie: cookie.split(';')[0] } });
      const html = await page.text();
      expect(html).toContain(`href="/decisions/${tokens.soon}"`);
      expect(html).toContain(`href="/decisions/${tokens.scope}"`);
      expect(html).not.toContain(`href="/decisions/${tokens.consent}"`);
    });
  });

  it('answers a signature request, the third kind of decision, 501 not_implemented (not a 422 on a kind the specification names), and writes nothing', async () => {
    const db = new Client({ connectionString: us.database.url });
    await db.connect();
    const sessions = async () => (await db.query(`SELECT count(*)::int AS n FROM decisions.decision_sessions`)).rows[0].n;
    const before = await sessions();
    const asked = await api('POST', '/api/v1/decisions', { kind: 'signature_request' });
    expect(asked.status).toBe(501);
    expect(asked.body).toEqual(expect.objectContaining({ code: 'not_implemented', message: expect.stringContaining('signature_request') }));
    expect(await sessions()).toBe(before);
    await db.end();
    // A kind the specification does not name is still a 422 on kind.
    const unknown = await api('POST', '/api/v1/decisions', { kind: 'petition' });
    expect([unknown.status, unknown.body.details?.[0]?.field]).toEqual([422, 'kind']);
    const documented = (await http(us.url, 'GET', '/.well-known/openapi')).body.paths['/api/v1/decisions'].post;
    expect(documented.responses['501']).toBeDefined();
  });

  it('completes many decisions at once with a small connection pool (DB_POOL_SIZE=3)', async () => {
    const flowId = await activeFlow({ ...newsletterFlow, name: 'Crowd', pattern: 'informed' });
    const tokens = await Promise.all(
      Array.from({ length: 8 }, async () => (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token as string),
    );
    for (const token of tokens) {
      await participant(token, 'transitions', { to: 'informed' });
      await participant(token, 'transitions', { to: 'evidenced' });
    }
    const answers = await Promise.all(tokens.map((token) => participant(token, 'complete', { outcome: 'granted' })));
    expect(answers.map((a) => a.status)).toEqual(tokens.map(() => 200));
    // Sign-in with wrong codes, concurrently, while holding session locks, does not starve the pool either.
    const signIns = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: (await activeFlow({ ...newsletterFlow, name: `Std ${i}` })) })).body.session_token;
        await participant(token, 'transitions', { to: 'authenticating' });
        await participant(token, 'sign_in', { email: `crowd${i}@example.com` });
        return token;
      }),
    );
    const wrong = await Promise.all(signIns.map((token, i) => participant(token, 'transitions', { to: 'verifying', email: `crowd${i}@example.com`, code: '00000000' })));
    expect(wrong.map((a) => a.status)).toEqual(signIns.map(() => 422));
    expect((await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).status).toBe(201);
  });

  it('walks the informed path: informed, evidenced, fulfilled', async () => {
    const flowId = await activeFlow({ ...newsletterFlow, name: 'Informed', pattern: 'informed', locale: 'de' });
    const token = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId })).body.session_token;
    const view = await http(us.url, 'GET', `/api/v1/decisions/${token}`);
    // The path follows the flow's pattern, and the session speaks the flow's language unless asked otherwise.
    expect(view.body).toMatchObject({ path: 'informed', allowed_transitions: ['informed'], locale: 'de' });
    const english = (await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, locale: 'en' })).body.session_token;
    expect((await http(us.url, 'GET', `/api/v1/decisions/${english}`)).body.locale).toBe('en');
    const skip = await participant(token, 'transitions', { to: 'evidenced' });
    expect(skip.status).toBe(409);
    // The steps this endpoint takes, as the view lists them (cancel and complete end a session by their own calls).
    expect(skip.body.allowed).toEqual(['informed']);
    expect((await participant(token, 'transitions', { to: 'informed' })).body.status).toBe('informed');
    expect((await participant(token, 'transitions', { to: 'evidenced' })).body.status).toBe('evidenced');
    const done = await participant(token, 'complete', { outcome: 'granted' });
    expect(done.status).toBe(200);
    expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('fulfilled');
    // A decided request is not cancelled: a fulfilled consent stays given (it is withdrawn with revoked),
    // and its consent token still verifies once.
    const cancelDecided = await participant(token, 'cancel', { reason: 'changed my mind' });
    expect(cancelDecided.status).toBe(409);
    expect(cancelDecided.body).toMatchObject({ code: 'illegal_transition', status: 'fulfilled', allowed: ['revoked'] });
    expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('fulfilled');
    expect((await api('GET', `/api/v1/decisions/${token}/verify?consent_token=${done.body.exchange_token}`)).body).toMatchObject({ valid: true, status: 'fulfilled' });
    expect((await participant(token, 'transitions', { to: 'revoked' })).status).toBe(200);
    const cancelRevoked = await participant(token, 'cancel', {});
    expect(cancelRevoked.status).toBe(409);
    expect(cancelRevoked.body).toMatchObject({ status: 'revoked', allowed: [] });
    expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('revoked');
  });

  describe('approvals', () => {
    const approval = { title: 'Pay invoice 117', action: 'payments.create', value: { amount: 125000, currency: 'EUR' }, trigger: 'value', agent_id: 'invoice-bot' };

    it('needs what is to be approved, with a known trigger', async () => {
      const missing = await api('POST', '/api/v1/decisions', { kind: 'approval' });
      expect(missing.status).toBe(422);
      expect(missing.body.details[0].field).toBe('approval');
      const trigger = await api('POST', '/api/v1/decisions', { kind: 'approval', approval: { ...approval, trigger: 'mood' } });
      expect(trigger.status).toBe(422);
      expect(trigger.body.details[0].field).toBe('approval.trigger');
      // What the person reads must read as stored: no reordering controls, no blank title, amounts JSON keeps whole, real currencies.
      for (const [change, field, reason] of [
        [{ title: 'Refund \u202e0001$\u202c to customer' }, 'approval.title', /bidirectional control/],
        [{ title: '   ' }, 'approval.title', /must not be blank/],
        [{ action: 'pay\u0007' }, 'approval.action', /control characters/],
        [{ agent_id: 'invoice\u200bbot' }, 'approval.agent_id', /invisible characters/],
        [{ value: { amount: 9007199254740993, currency: 'EUR' } }, 'approval.value.amount', /at most 9007199254740991/],
        [{ value: { amount: 1e300, currency: 'EUR' } }, 'approval.value.amount', /./],
        [{ value: { amount: 100, currency: 'XYZ' } }, 'approval.value.currency', /ISO 4217/],
      ] as const) {
        const refused = await api('POST', '/api/v1/decisions', { kind: 'approval', approval: { ...approval, ...change } });
        expect([field, refused.status, refused.body.details?.[0]?.field]).toEqual([field, 422, field]);
        expect(refused.body.details[0].reason).toMatch(reason);
      }
      const multiline = await api('POST', '/api/v1/decisions', { kind: 'approval', approval: { ...approval, description: 'Line one\nline two', value: { amount: 100, currency: 'CLF' } } });
      expect(multiline.status).toBe(201);
    });

    it.each([
      ['approve', 'approved', 'approval.granted', 'fulfilled'],
      ['deny', 'denied', 'approval.denied', 'expired'],
    ])('completes with %s as %s', async (spelling, outcome, event, status) => {
      const token = (await api('POST', '/api/v1/decisions', { kind: 'approval', approval })).body.session_token;
      await signIn(token, 'approver@example.com');
      const done = await participant(token, 'complete', { outcome: spelling });
      expect(done.body.outcome).toBe(outcome);
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe(status);
      await eventually(async () => (await trailEvents(us, event)).length > 0);
    });

    it('is decided only by the browser that signed in: the session token alone, which the organisation holds, is refused after sign-in', async () => {
      const email = 'only-me@example.com';
      const token = (await api('POST', '/api/v1/decisions', { kind: 'approval', approval, subject: { email } })).body.session_token;
      await signIn(token, email);
      const proof = proofs.get(token)!;
      expect(proof).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The token holder, without the proof or with another: 403 naming the header, nothing decided.
      for (const given of ['', 'not-the-proof']) {
        const refused = await participant(token, 'complete', { outcome: 'approved' }, given);
        expect([given, refused.status, refused.body.code, refused.body.details]).toEqual([given, 403, 'forbidden', [{ field: 'X-Participant-Proof', reason: expect.any(String) }]]);
      }
      expect((await participant(token, 'cancel', { reason: 'not me' }, '')).status).toBe(403);
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body.status).toBe('reviewing');

      // The person on another device signs in again with a new code: a new proof, and the old one stops counting.
      expect((await participant(token, 'sign_in', { email: 'someone-else@example.com' }, '')).status).toBe(403);
      expect((await participant(token, 'sign_in', { email }, '')).status).toBe(200);
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
      const code = /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
      expect((await participant(token, 'proof', { email, code: code === '000000' ? '111111' : '000000' }, '')).status).toBe(422);
      const again = await participant(token, 'proof', { email, code }, '');
      expect(again.status).toBe(200);
      expect(again.body.participant_proof).not.toBe(proof);
      expect((await participant(token, 'complete', { outcome: 'approved' }, proof)).status).toBe(403);
      const done = await participant(token, 'complete', { outcome: 'approved' }, again.body.participant_proof);
      expect([done.status, done.body.outcome]).toEqual([200, 'approved']);
      // A request no one signed in to takes no new proof.
      const fresh = (await api('POST', '/api/v1/decisions', { kind: 'approval', approval })).body.session_token;
      expect((await participant(fresh, 'proof', { email, code })).status).toBe(409);
    });

    it('takes only the address of a person the organisation named by their external id', async () => {
      const known = await api('POST', `/api/v1/applications/${applicationId}/subjects`, { email: 'alice.by-id@example.com', external_id: 'cust-alice-1' });
      expect(known.status).toBe(201);
      const open = async () => (await api('POST', '/api/v1/decisions', { kind: 'approval', approval, subject: { external_id: 'cust-alice-1' } })).body.session_token;
      // Someone else signing in is refused (they became the approver, and the request left Alice's inbox).
      const token = await open();
      expect((await participant(token, 'transitions', { to: 'authenticating' })).status).toBe(200);
      expect((await participant(token, 'sign_in', { email: 'mallory@example.com' })).status).toBe(200);
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent('mallory@example.com')}`);
      const code = /\b(\d{6})\b/.exec(mail.body.data[0].text)![1];
      const refused = await participant(token, 'transitions', { to: 'verifying', email: 'mallory@example.com', code });
      expect([refused.status, refused.body.details]).toEqual([403, [{ field: 'email', reason: 'not the person this request is for' }]]);
      // Alice herself signs in, and the decision is hers.
      const hers = await open();
      await signIn(hers, 'alice.by-id@example.com');
      const done = await participant(hers, 'complete', { outcome: 'approved' });
      expect(done.status).toBe(200);
      const exchanged = await api('POST', `/api/v1/decisions/${hers}/exchange`, { exchange_token: done.body.exchange_token });
      expect(exchanged.body.claims.subject).toEqual({ id: known.body.id, email: 'alice.by-id@example.com' });
    });

    it('counters with a counter-proposal', async () => {
      const token = (await api('POST', '/api/v1/decisions', { kind: 'approval', approval })).body.session_token;
      await signIn(token, 'approver@example.com');
      const bare = await participant(token, 'complete', { outcome: 'counter' });
      expect(bare.status).toBe(422);
      expect(bare.body.details[0].field).toBe('counter');
      // The proposal is what the organisation acts on: a note and an amount as an approval takes them, nothing else.
      for (const [counter, field] of [
        [{}, 'counter'],
        [{ note: 'x'.repeat(2001) }, 'counter.note'],
        [{ note: 'Half \u202enow' }, 'counter.note'],
        [{ value: { amount: -5, currency: 'EUR' } }, 'counter.value.amount'],
        [{ value: { amount: 5, currency: 'XYZ' } }, 'counter.value.currency'],
        [{ note: 'Half now', nested: { deep: true } }, 'counter.nested'],
      ] as const) {
        const refused = await participant(token, 'complete', { outcome: 'counter', counter });
        expect([field, refused.status, refused.body.details?.[0]?.field]).toEqual([field, 422, field]);
      }
      const countered = await participant(token, 'complete', { outcome: 'counter', counter: { note: 'Half now', value: { amount: 62500, currency: 'EUR' } } });
      expect(countered.body.outcome).toBe('countered');
      await eventually(async () => (await trailEvents(us, 'approval.countered')).some((e) => (e.data.counter as { note: string }).note === 'Half now'));
      const sessionId = (await trailEvents(us, 'approval.countered')).find((e) => (e.data.counter as { note: string }).note === 'Half now')!.data.session_id;
      // Every state change of the session is on the audit trail with its actor.
      const changes = (await trailEvents(us, 'decision.state_changed')).filter((e) => e.data.session_id === sessionId);
      expect(changes.map((e) => e.data.to).slice(0, 4)).toEqual(['pending', 'authenticating', 'verifying', 'reviewing']);
      expect(changes.length).toBeGreaterThan(4);
      expect(changes[0].actor.type).toBe('application');
      expect(changes.slice(1).every((e) => e.actor.type === 'participant')).toBe(true);
      // Before signing in the participant is whoever holds the link; from the code on, the person, by their opaque id.
      const personId = changes.find((e) => e.data.to === 'reviewing')!.actor.id;
      expect(personId).toMatch(/^sub_us/);
      expect(changes.find((e) => e.data.to === 'authenticating')!.actor).toEqual({ type: 'participant' });
      const afterSignIn = changes.filter((e) => e.data.from && e.data.from !== 'pending' && e.data.from !== 'authenticating');
      expect(afterSignIn.length).toBeGreaterThan(0);
      expect(afterSignIn.every((e) => e.actor.id === personId)).toBe(true);
    });
  });
});
