import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import { eventually, http, randomSecret, RunningCountry } from '../support/country-harness';
import { BrowserCommitPair, startBrowserCommitPair } from '../support/browser-commit-pair';
import { openApiConformance } from '../support/openapi-conformance';

/**
 * Races and retries of consent captured in the organisation's own forms: browser commits and server
 * commits of captures under one Idempotency-Key or one token at once, in one country and across the
 * border, and a form builder's deliveries redelivered at once or racing the connection's changes.
 * Each makes one record per key, answered alike, with one receipt mail and one consent event.
 */
describe('capture and form-builder races', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let usDb: Client;
  let deDb: Client;
  let pair: BrowserCommitPair | undefined;

  const capture: BrowserCommitPair['capture'] = (...args) => pair!.capture(...args);
  const browserCommit = (email: string) => ({ commit: true, subject: { email } });
  const authorize: BrowserCommitPair['authorize'] = (...args) => pair!.authorize(...args);
  const recordsOf = async (email: string) => {
    const rows = async (db: Client) =>
      (await db.query(`SELECT r.record_id FROM decisions.consent_records r JOIN decisions.subjects s ON s.id = r.subject_id WHERE s.email = $1`, [email])).rows.map((row) => row.record_id as string);
    return [...(await rows(usDb)), ...(await rows(deDb))];
  };
  const mailsTo = async (email: string) =>
    (await usDb.query(`SELECT count(*)::int AS n FROM decisions.dev_mailbox WHERE to_address = $1`, [email])).rows[0].n + (await deDb.query(`SELECT count(*)::int AS n FROM decisions.dev_mailbox WHERE to_address = $1`, [email])).rows[0].n;
  const grantedEvents = async (recordId: string) =>
    (await usDb.query(`SELECT count(*)::int AS n FROM audit_chain.entries WHERE event_type IN ('consent.granted', 'consent.denied') AND payload->>'record_id' = $1`, [recordId])).rows[0].n +
    (await deDb.query(`SELECT count(*)::int AS n FROM audit_chain.entries WHERE event_type IN ('consent.granted', 'consent.denied') AND payload->>'record_id' = $1`, [recordId])).rows[0].n;

  beforeAll(async () => {
    pair = await startBrowserCommitPair({ adminToken });
    ({ us, de, applicationId, apiToken, flowId, usDb, deDb } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
  });

  it('makes one capture and one record for a browser commit sent many times at once under one key', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => capture(us, browserCommit('many@example.com'), 'many-1')));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const made = answers.filter((answer) => answer.status === 201);
    expect(new Set(made.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    // A retry once the first finished answers it.
    const retried = await capture(us, browserCommit('many@example.com'), 'many-1');
    expect([retried.status, retried.body]).toEqual([201, made[0]?.body ?? retried.body]);
    expect(await recordsOf('many@example.com')).toEqual([retried.body.record_id]);
    await eventually(async () => (await mailsTo('many@example.com')) >= 1 && (await grantedEvents(retried.body.record_id)) >= 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([await mailsTo('many@example.com'), await grantedEvents(retried.body.record_id)]).toEqual([1, 1]);
  });

  it('commits one capture token sent to authorize many times at once once', async () => {
    const token = (await capture(us)).body.capture_token;
    const answers = await Promise.all(Array.from({ length: 6 }, () => authorize(us, token, 'twice@example.com')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((answer) => answer.body.record_id)).size).toBe(1);
    expect(await recordsOf('twice@example.com')).toEqual([answers[0].body.record_id]);
    await eventually(async () => (await mailsTo('twice@example.com')) >= 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([await mailsTo('twice@example.com'), await grantedEvents(answers[0].body.record_id)]).toEqual([1, 1]);
  });

  it('sends a browser commit retried at the other country\'s gateway after its answer was lost to the country that made it: one record', async () => {
    const first = await capture(us, browserCommit('border@example.com'), 'border-1');
    expect(first.status).toBe(201);
    // DE made a second capture and answered it with a 421, whose token the organisation's server
    // committed at US: a second record, receipt mail and consent.granted for one Idempotency-Key.
    const retried = await capture(de, browserCommit('border@example.com'), 'border-1');
    expect([retried.status, retried.body.code, retried.body.home_country, retried.body.capture_token]).toEqual([421, 'wrong_country', 'US', undefined]);
    expect(await openApiConformance(de.url).then((conforms) => conforms('POST', '/api/v1/captures', retried))).toEqual([true, null]);
    // Sent there, the retry answers the first capture and record.
    const there = await capture(us, browserCommit('border@example.com'), 'border-1');
    expect([there.status, there.body]).toEqual([201, first.body]);
    expect(await recordsOf('border@example.com')).toEqual([first.body.record_id]);
    // DE kept no capture of the retry, and nothing of the person.
    expect((await deDb.query(`SELECT count(*)::int AS n FROM decisions.captures WHERE application_id = $1 AND retry_key_digest IS NOT NULL`, [applicationId])).rows[0].n).toBe(0);
    const deDump = await deDb.query(`SELECT (SELECT json_agg(s) FROM decisions.subjects s)::text AS subjects, (SELECT json_agg(m) FROM decisions.dev_mailbox m)::text AS mail`);
    expect(JSON.stringify(deDump.rows[0])).not.toContain('border@');
    await eventually(async () => (await mailsTo('border@example.com')) >= 1 && (await grantedEvents(first.body.record_id)) >= 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([await mailsTo('border@example.com'), await grantedEvents(first.body.record_id)]).toEqual([1, 1]);
  });
  describe('form-builder deliveries', () => {
    const FORM = {
      id: 'Race01',
      hidden: [],
      fields: [
        { id: 'f_email', ref: 'email_q', type: 'email', validations: { required: true } },
        { id: 'f_news', ref: 'newsletter_q', type: 'yes_no' },
        { id: 'f_analytics', ref: 'analytics_q', type: 'yes_no' },
        { id: 'f_fraud', ref: 'fraud_q', type: 'yes_no' },
      ],
    };
    const MAPPING = { email: 'email_q', purposes: { newsletter: { field: 'newsletter_q' }, analytics: { field: 'analytics_q' }, fraud: { field: 'fraud_q' } } };
    const connect = async () => {
      const created = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/form_connections`, {
        token: apiToken,
        body: { platform: 'typeform', form_id: FORM.id, flow_id: flowId, mapping: MAPPING, form_definition: FORM },
      });
      expect(created.status).toBe(201);
      return created.body as { id: string; secret: string };
    };
    const submission = (token: string, address: string, newsletter: boolean, submittedAt = '2026-11-20T10:00:00Z') =>
      JSON.stringify({
        event_id: `evt${token}`,
        event_type: 'form_response',
        form_response: {
          form_id: FORM.id,
          token,
          submitted_at: submittedAt,
          answers: [
            { type: 'email', email: address, field: { id: 'f_email', type: 'email', ref: 'email_q' } },
            { type: 'boolean', boolean: newsletter, field: { id: 'f_news', type: 'yes_no', ref: 'newsletter_q' } },
          ],
        },
      });
    const sign = (secret: string, raw: string) => 'sha256=' + createHmac('sha256', secret).update(raw, 'utf8').digest('base64');
    const deliver = (connectionId: string, raw: string, secret: string) =>
      http(us.url, 'POST', `/hooks/typeform/${connectionId}`, { rawBody: raw, headers: { 'typeform-signature': sign(secret, raw) } });

    it('records a delivery redelivered many times at once once, every answer naming the one record', async () => {
      const connection = await connect();
      const raw = submission('resp-many', 'hooked@example.com', true);
      const answers = await Promise.all(Array.from({ length: 8 }, () => deliver(connection.id, raw, connection.secret)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      expect(new Set(answers.map((answer) => answer.body.record_id)).size).toBe(1);
      expect(await recordsOf('hooked@example.com')).toEqual([answers[0].body.record_id]);
      await eventually(async () => (await mailsTo('hooked@example.com')) >= 1 && (await grantedEvents(answers[0].body.record_id)) >= 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect([await mailsTo('hooked@example.com'), await grantedEvents(answers[0].body.record_id)]).toEqual([1, 1]);
    });

    it('records two submissions of one person delivered at once as two records, the later superseding the earlier', async () => {
      const connection = await connect();
      const [earlier, later] = await Promise.all([
        deliver(connection.id, submission('resp-a', 'twosubs@example.com', true, '2026-11-20T10:00:00Z'), connection.secret),
        deliver(connection.id, submission('resp-b', 'twosubs@example.com', false, '2026-11-20T10:05:00Z'), connection.secret),
      ]);
      expect([earlier.status, later.status]).toEqual([200, 200]);
      // The later decision holds, whichever was recorded first.
      const status = await http(us.url, 'GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=twosubs%40example.com`, { token: apiToken });
      expect(status.body.purposes.newsletter).toMatchObject({ status: 'declined', record_id: later.body.record_id });
      expect((await recordsOf('twosubs@example.com')).sort()).toEqual([earlier.body.record_id, later.body.record_id].sort());
    });

    it('honours the replaced secret for deliveries racing its rotation, and every secret a rotation answered', async () => {
      const connection = await connect();
      const rotate = () => http(us.url, 'POST', `/api/v1/applications/${applicationId}/form_connections/${connection.id}/rotate_secret`, { token: apiToken });
      // A delivery signed with the secret a rotation replaces is read before the rotation (the current
      // secret) or after it (the previous one, honoured for a day): either way it is recorded.
      const [rotation, ...delivered] = await Promise.all([
        rotate(),
        ...Array.from({ length: 4 }, (_, i) => deliver(connection.id, submission(`resp-rot-${i}`, `rotating${i}@example.com`, true), connection.secret)),
      ]);
      expect([rotation.status, ...delivered.map((answer) => answer.status)]).toEqual(Array(5).fill(200));
      // Two rotations at once are made one after the other: the later one's previous secret is the
      // earlier one's new secret, so the secret each answered is honoured after both.
      const [first, second] = await Promise.all([rotate(), rotate()]);
      expect([first.status, second.status]).toEqual([200, 200]);
      const accepted = await Promise.all([first, second].map((answer, i) => deliver(connection.id, submission(`resp-rot-after-${i}`, `rotated${i}@example.com`, true), answer.body.secret)));
      expect(accepted.map((answer) => answer.status)).toEqual([200, 200]);
      // A second rotation within the day drops the oldest secret (docs/form-builders.md): the secrets
      // two and three rotations back are refused, which is how a leaked secret is revoked at once.
      const revoked = await Promise.all(
        [connection.secret, rotation.body.secret].map((secret, i) => deliver(connection.id, submission(`resp-rot-revoked-${i}`, `revoked${i}@example.com`, true), secret)),
      );
      expect(revoked.map((answer) => answer.status)).toEqual([401, 401]);
    });

    it('answers a delivery racing the connection\'s deletion either with its record or 404, and leaves no half-written record', async () => {
      const connection = await connect();
      const [deleted, ...delivered] = await Promise.all([
        http(us.url, 'DELETE', `/api/v1/applications/${applicationId}/form_connections/${connection.id}`, { token: apiToken }),
        ...Array.from({ length: 4 }, (_, i) => deliver(connection.id, submission(`resp-del-${i}`, `deleting${i}@example.com`, true), connection.secret)),
      ]);
      expect(deleted.status).toBe(204);
      for (const [i, answer] of delivered.entries()) {
        expect([200, 404]).toContain(answer.status);
        expect(await recordsOf(`deleting${i}@example.com`)).toEqual(answer.status === 200 ? [answer.body.record_id] : []);
      }
      expect((await deliver(connection.id, submission('resp-del-late', 'late@example.com', true), connection.secret)).status).toBe(404);
    });
  });
});
