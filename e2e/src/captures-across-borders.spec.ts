import { Client } from 'pg';
import { validateReceipt } from '@dcr/receipts';
import { applicationWithToken, eventually, http, randomSecret, RunningCountry } from '../support/country-harness';
import { BrowserCommitPair, startBrowserCommitPair } from '../support/browser-commit-pair';

/**
 * A capture made at one country's endpoint for a person homed in another: the 421 of the country
 * holding the capture names the person's home, and the home commits it (it claims the capture from
 * the holder, which keeps no trace of the person), once, in one country only.
 */
describe('captures committed at the person\'s home country', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  const adminToken = randomSecret();
  const subjectRefKey = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let usDb: Client;
  let deDb: Client;
  let pair: BrowserCommitPair | undefined;

  const declined = { decision: 'declined', default_checked: false, mandatory: false };
  const capture: BrowserCommitPair['capture'] = (...args) => pair!.capture(...args);
  const authorize: BrowserCommitPair['authorize'] = (...args) => pair!.authorize(...args);
  /** Homes a person in `country` with a Record API record there. */
  const homeIn = async (country: RunningCountry, email: string) => {
    const recorded = await http(country.url, 'POST', '/api/v1/consent_records', {
      token: apiToken,
      body: { flow_id: flowId, subject: { email }, decisions: { newsletter: declined, analytics: declined }, captured_at: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(recorded.status).toBe(201);
  };
  const heldAtDe = async (token: string) =>
    (await deDb.query(`SELECT committed_in, record_id, commit_attempts FROM decisions.captures WHERE token_hash = encode(sha256($1::bytea), 'hex')`, [token])).rows[0];

  beforeAll(async () => {
    pair = await startBrowserCommitPair({ adminToken, subjectRefKey });
    ({ us, de, applicationId, apiToken, flowId, usDb, deDb } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair?.close();
  });

  it('commits a capture made at DE for a person homed in US at US, where the 421 sends the caller, and the person never reaches DE', async () => {
    await homeIn(us, 'alice@example.com');
    const captured = await capture(de, { labels: { newsletter: require('node:crypto').createHash('sha256').update('Something else').digest('hex') } });
    expect(captured.status).toBe(201);
    const token: string = captured.body.capture_token;
    expect(token).toMatch(/^cap_de/);

    const atDe = await authorize(de, token, 'alice@example.com');
    expect([atDe.status, atDe.body.code, atDe.body.home_country]).toEqual([421, 'wrong_country', 'US']);
    // The refused commit left the capture free for the person's home.
    expect(await heldAtDe(token)).toEqual({ committed_in: null, record_id: null, commit_attempts: 0 });

    const atUs = await authorize(us, token, 'alice@example.com');
    expect(atUs.status).toBe(200);
    expect(atUs.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
    // Committed again for the same person, at US: the same record.
    expect((await authorize(us, token, 'ALICE@example.com')).body).toEqual(atUs.body);
    // DE marks it committed by US with the record's opaque id, and sends the same person there again.
    expect(await heldAtDe(token)).toEqual({ committed_in: 'US', record_id: atUs.body.record_id, commit_attempts: 0 });
    const againAtDe = await authorize(de, token, 'alice@example.com');
    expect([againAtDe.status, againAtDe.body.home_country]).toEqual([421, 'US']);

    // Recorded in US like any capture commit: the receipt (the capture's wording verdict on it) and the receipt mail.
    await eventually(async () => (await http(us.url, 'GET', `/api/v1/consent_receipts/${atUs.body.record_id}`, { token: apiToken })).status === 200);
    const receipt = (await http(us.url, 'GET', `/api/v1/consent_receipts/${atUs.body.record_id}`, { token: apiToken })).body;
    expect(receipt.extensions).toMatchObject({ collection_channel: 'form_capture', wording_drift: { newsletter: 'drift' } });
    expect(validateReceipt(receipt).valid).toBe(true);
    const mailOf = (recordId: string) => usDb.query(`SELECT 1 FROM decisions.dev_mailbox WHERE to_address = 'alice@example.com' AND text LIKE '%' || $1 || '%'`, [recordId]);
    await eventually(async () => (await mailOf(atUs.body.record_id)).rowCount === 1);
    const trail = await usDb.query(`SELECT 1 FROM audit_chain.entries WHERE payload->>'record_id' = $1`, [atUs.body.record_id]);
    expect(trail.rowCount).toBeGreaterThan(0);

    // Nothing of the person in DE's database.
    const deDump = await deDb.query(
      `SELECT (SELECT json_agg(c) FROM decisions.captures c)::text AS captures, (SELECT json_agg(s) FROM decisions.subjects s)::text AS subjects,
              (SELECT json_agg(m) FROM decisions.dev_mailbox m)::text AS mail, (SELECT count(*)::int FROM decisions.consent_records) AS records`,
    );
    expect(JSON.stringify(deDump.rows[0])).not.toContain('alice@');
    expect(deDump.rows[0].records).toBe(0);
  });

  it('answers another person 409 in both countries once the capture is committed, and a DE commit 409 at US', async () => {
    await homeIn(us, 'bob@example.com');
    await homeIn(de, 'hans@example.com');
    const token = (await capture(de)).body.capture_token;
    await homeIn(us, 'carol@example.com');
    expect((await authorize(us, token, 'carol@example.com')).status).toBe(200);
    const bob = await authorize(us, token, 'bob@example.com');
    expect([bob.status, bob.body.code, bob.body.details]).toEqual([409, 'conflict', [{ field: 'subject', reason: 'the capture was committed for another person' }]]);
    // A DE person at DE: not the person US committed it for (they would be homed in US).
    expect((await authorize(de, token, 'hans@example.com')).status).toBe(409);

    // Committed at DE for a DE person: a US person at US is another person.
    const local = (await capture(de)).body.capture_token;
    const byHans = await authorize(de, local, 'hans@example.com');
    expect([byHans.status, byHans.body.record_id]).toEqual([200, expect.stringMatching(/^rec_de/)]);
    expect((await authorize(us, local, 'bob@example.com')).status).toBe(409);
    expect((await authorize(de, local, 'hans@example.com')).body.record_id).toBe(byHans.body.record_id);
  });

  it('commits a capture in one country only when both commit it at the same moment', async () => {
    await homeIn(us, 'dora@example.com');
    await homeIn(de, 'fritz@example.com');
    for (let round = 0; round < 3; round++) {
      const token = (await capture(de)).body.capture_token;
      const answers = await Promise.all([authorize(us, token, 'dora@example.com'), authorize(de, token, 'fritz@example.com')]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const records = (await usDb.query(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE 'capture:%' AND record_id = ANY($1)`, [answers.map((a) => a.body.record_id)])).rows[0].n
        + (await deDb.query(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE idempotency_key LIKE 'capture:%' AND record_id = ANY($1)`, [answers.map((a) => a.body.record_id)])).rows[0].n;
      expect(records).toBe(1);
    }
  });

  it('commits at the home country when both countries are asked for the same person at the same moment (the holder\'s own try frees the capture)', async () => {
    await homeIn(us, 'greta@example.com');
    for (let round = 0; round < 5; round++) {
      const token = (await capture(de)).body.capture_token;
      const [here, there] = await Promise.all([authorize(us, token, 'greta@example.com'), authorize(de, token, 'greta@example.com')]);
      // It was 409 "committed for another person" at US whenever DE's own try held the claim.
      expect([round, here.status, here.body.record_id, there.status, there.body.home_country]).toEqual([round, 200, expect.stringMatching(/^rec_us/), 421, 'US']);
      expect(await heldAtDe(token)).toEqual({ committed_in: 'US', record_id: here.body.record_id, commit_attempts: 0 });
    }
  });

  it('answers an unknown capture 404, an expired one 410, and a person no country knows 421 to the country holding the capture', async () => {
    await homeIn(us, 'erin@example.com');
    const unknown = await authorize(us, `cap_de${'0'.repeat(30)}`, 'erin@example.com');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    expect((await authorize(us, `cap_fr${'0'.repeat(30)}`, 'erin@example.com')).status).toBe(404);

    const stale = (await capture(de)).body.capture_token;
    await deDb.query(`UPDATE decisions.captures SET expires_at = now() - interval '1 minute' WHERE token_hash = encode(sha256($1::bytea), 'hex')`, [stale]);
    const late = await authorize(us, stale, 'erin@example.com');
    expect([late.status, late.body.code]).toEqual([410, 'gone']);

    // Nobody knows this person yet: the country holding the capture records them.
    const token = (await capture(de)).body.capture_token;
    // An application of another account does not see the capture: 404, not a 421 to DE, which
    // would answer it 404 too (an API token reaches every application of its own account: below).
    const { apiToken: otherToken } = await applicationWithToken(us, adminToken, { name: 'Other shop', environment: 'sandbox' });
    await eventually(async () => (await http(de.url, 'GET', '/api/v1/me', { token: otherToken })).status === 200);
    for (const country of [us, de]) {
      const foreign = await http(country.url, 'POST', `/api/v1/decisions/${token}/authorize`, { token: otherToken, body: { subject: { email: 'newcomer@example.com' } } });
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
    }
    const newcomer = await authorize(us, token, 'newcomer@example.com');
    expect([newcomer.status, newcomer.body.home_country]).toEqual([421, 'DE']);
    expect((await authorize(de, token, 'newcomer@example.com')).body.record_id).toMatch(/^rec_de/);
  });

  it('keeps a browser commit for a person homed elsewhere uncommitted and answers its token with the 421, for the server to commit at the home country', async () => {
    await homeIn(us, 'grace@example.com');
    const refused = await capture(de, { commit: true, subject: { email: 'grace@example.com' } });
    expect(refused.status).toBe(421);
    expect(refused.body).toMatchObject({ code: 'wrong_country', home_country: 'US', capture_token: expect.stringMatching(/^cap_de/), expires_at: expect.any(String) });
    expect(Object.keys(refused.body).sort()).toEqual(['capture_token', 'code', 'expires_at', 'home_country', 'message', 'request_id']);
    expect(await heldAtDe(refused.body.capture_token)).toEqual({ committed_in: null, record_id: null, commit_attempts: 0 });

    const committed = await authorize(us, refused.body.capture_token, 'grace@example.com');
    // Committed by the organisation's server: the capture's own channel, not the browser's.
    expect(committed.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
  });
  it('commits a capture of another application of its account with an API token of that account, held here or across the border; another account\'s token finds no capture', async () => {
    const sibling = await applicationWithToken(us, apiToken, { name: 'Shop outlet', environment: 'sandbox' });
    const stranger = await applicationWithToken(us, adminToken, { name: 'Stranger', environment: 'sandbox' });
    const commitWith = (token: string, capture: string, email: string) => http(us.url, 'POST', `/api/v1/decisions/${capture}/authorize`, { token, body: { subject: { email } } });
    const ownerOf = async (recordId: string) => (await usDb.query(`SELECT application_id FROM decisions.consent_records WHERE record_id = $1`, [recordId])).rows;

    const here = await capture(us);
    expect(here.status).toBe(201);
    expect((await commitWith(stranger.apiToken, here.body.capture_token, 'ines@example.com')).status).toBe(404);
    const committedHere = await commitWith(sibling.apiToken, here.body.capture_token, 'ines@example.com');
    expect(committedHere.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
    expect(await ownerOf(committedHere.body.record_id)).toEqual([{ application_id: applicationId }]);

    await homeIn(us, 'jules@example.com');
    const there = await capture(de);
    expect(there.body.capture_token).toMatch(/^cap_de/);
    expect((await commitWith(stranger.apiToken, there.body.capture_token, 'jules@example.com')).status).toBe(404);
    const committedThere = await commitWith(sibling.apiToken, there.body.capture_token, 'jules@example.com');
    expect(committedThere.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
    expect(await ownerOf(committedThere.body.record_id)).toEqual([{ application_id: applicationId }]);
  });
});
