import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import { subjectReference } from '@dcr/domain';
import { activeFlowApplication, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../support/country-harness';

/**
 * Who is the same person, whichever door a consent comes through: the Record API, imports, a form
 * builder's webhook and consent_status take an external id by one rule (up to 200 characters
 * without the spaces around it, no control character, Unicode text), a form builder's e-mail answer
 * by the Record API's rule, and an identifier is kept for a person only when no one else, in this
 * country or another, holds it.
 */
describe('subject identity across entry points', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  const adminToken = randomSecret();
  const subjectRefKey = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let usDb: Client;
  let deDb: Client;

  const api = (method: string, path: string, body?: unknown, country = us) => http(country.url, method, path, { token: apiToken, body });
  const granted = { decision: 'granted', default_checked: false, mandatory: false };
  const declined = { decision: 'declined', default_checked: false, mandatory: false };
  const record = (subject: Record<string, unknown>, country = us, decision = granted) =>
    api('POST', '/api/v1/consent_records', { flow_id: flowId, subject, decisions: { newsletter: decision }, captured_at: new Date().toISOString() }, country);
  const statusBy = (parameter: string, value: string, country = us) =>
    api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[${parameter}]=${encodeURIComponent(value)}`, undefined, country);
  const importRows = (records: unknown[], country = us) => api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records }, country);
  const row = (subject: Record<string, unknown>) => ({ subject, decisions: { newsletter: { decision: 'granted' } }, captured_at: new Date().toISOString() });
  const subjects = (country = us) => ({
    create: (body: Record<string, unknown>) => api('POST', `/api/v1/applications/${applicationId}/subjects`, body, country),
    find: (parameter: string, value: string) => api('GET', `/api/v1/applications/${applicationId}/subjects?${parameter}=${encodeURIComponent(value)}`, undefined, country),
  });
  /** The home country a country's directory holds for an identifier of this application, or undefined. */
  const directoryHome = async (db: Client, kind: 'email' | 'external_id', value: string): Promise<string | undefined> => {
    const reference = subjectReference(subjectRefKey, applicationId, kind, value);
    const { rows } = await db.query(`SELECT home_country FROM residency_router.directory_entries WHERE reference = $1`, [reference]);
    return rows[0]?.home_country;
  };

  beforeAll(async () => {
    countries = await startCountryPair({ adminToken, subjectRefKey });
    ({ us, de } = countries);
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, { name: 'Signup', pattern: 'standard', purposes: ['newsletter'], consent_duration: 'P1Y' }));
    usDb = new Client({ connectionString: us.database.url });
    deDb = new Client({ connectionString: de.database.url });
    await Promise.all([usDb.connect(), deDb.connect()]);
  });

  afterAll(async () => {
    await usDb?.end();
    await deDb?.end();
    await countries?.close();
  });

  it('takes an external id by one rule at the Record API, imports and consent_status', async () => {
    // 150 emoji: 150 characters, 300 UTF-16 code units. Recorded, it must be askable by.
    const emoji = '😀'.repeat(150);
    const recorded = await record({ email: 'emoji@example.com', external_id: emoji });
    expect(recorded.status).toBe(201);
    const byId = await statusBy('external_id', emoji);
    expect(byId.status).toBe(200);
    expect(byId.body.subject.id).toBe(recorded.body.consent_record.subject.id);

    // Spaces around an id are not kept, so they do not count towards its length, at either door.
    const padded = ` ${'p'.repeat(199)}  `;
    expect((await record({ email: 'padded@example.com', external_id: padded })).status).toBe(201);
    expect((await statusBy('external_id', padded)).status).toBe(200);

    // The import takes and refuses exactly what the Record API takes and refuses.
    const imported = await importRows([
      row({ email: 'emoji2@example.com', external_id: '😀'.repeat(149) + 'x' }),
      row({ email: 'padded2@example.com', external_id: ` ${'q'.repeat(199)}  ` }),
      row({ email: 'tab@example.com', external_id: 'crm\t4711' }),
    ]);
    expect(imported.status).toBe(201);
    expect(imported.body.rows.map((r: { outcome: string }) => r.outcome)).toEqual(['recorded', 'recorded', 'refused']);
    expect(imported.body.rows[2].reasons).toEqual([{ field: 'subject.external_id', reason: 'must not contain control characters' }]);
    const viaApi = await record({ email: 'tab@example.com', external_id: 'crm\t4711' });
    expect(viaApi.status).toBe(422);
    expect(viaApi.body.details).toEqual([{ field: 'subject.external_id', reason: 'external_id must not contain control characters' }]);
  });

  it("refuses at a form builder's webhook, by field, what the Record API refuses: never a 500, never a person no one can name", async () => {
    const form = {
      id: 'FormId1',
      title: 'Sign up',
      hidden: ['crm_id'],
      fields: [
        { id: 'f_email', ref: 'email_q', type: 'email', title: 'E-mail', validations: { required: true } },
        { id: 'f_news', ref: 'news_q', type: 'yes_no', title: 'Newsletter', validations: { required: false } },
      ],
    };
    const connection = await api('POST', `/api/v1/applications/${applicationId}/form_connections`, {
      platform: 'typeform',
      form_id: form.id,
      flow_id: flowId,
      mapping: { email: 'email_q', external_id: 'crm_id', purposes: { newsletter: { field: 'news_q' } } },
      form_definition: form,
    });
    expect(connection.status).toBe(201);
    let n = 0;
    // The body as raw JSON text, so an escaped unpaired surrogate (`\ud800`) reaches the service as sent.
    const deliver = (emailJson: string, crmJson: string) => {
      const token = `tok${n++}`;
      const raw =
        `{"event_id":"ev${token}","event_type":"form_response","form_response":{"form_id":"${form.id}","token":"${token}",` +
        `"submitted_at":"${new Date().toISOString()}","hidden":{"crm_id":${crmJson}},"answers":[` +
        `{"type":"email","email":${emailJson},"field":{"id":"f_email","type":"email","ref":"email_q"}},` +
        `{"type":"boolean","boolean":true,"field":{"id":"f_news","type":"yes_no","ref":"news_q"}}]}}`;
      const signature = 'sha256=' + createHmac('sha256', connection.body.secret).update(raw, 'utf8').digest('base64');
      return http(us.url, 'POST', `/hooks/typeform/${connection.body.id}`, { rawBody: raw, headers: { 'typeform-signature': signature } });
    };

    const surrogate = await deliver('"lone@example.com"', '"crm-\\ud800"');
    expect(surrogate.status).toBe(422);
    expect(surrogate.body.details).toEqual([{ field: 'external_id', reason: 'the hidden field crm_id must be Unicode text (it holds an unpaired surrogate)' }]);

    // Addresses the Record API, consent_status and the records page's sign-in refuse: recorded, no one could ever name them.
    // An address over a limit is refused naming it, in the words every entry point uses.
    for (const [address, reason] of [
      ['dot@example.com.', 'is not an e-mail address'],
      [`${'l'.repeat(65)}@example.com`, 'must have at most 64 bytes before the @ (an e-mail address limit)'],
    ]) {
      const refused = await deliver(JSON.stringify(address), '"crm-dot"');
      expect([address, refused.status, refused.body.details]).toEqual([address, 422, [{ field: 'email', reason: `the answer to email_q ${reason}` }]]);
    }
    expect((await usDb.query(`SELECT count(*)::int AS n FROM decisions.subjects WHERE email LIKE 'dot@%' OR email LIKE 'lll%' OR email = 'lone@example.com'`)).rows[0].n).toBe(0);

    // The same person by the same rule as the Record API: the emoji id recorded above is theirs.
    const same = await deliver('"EMOJI@example.com"', JSON.stringify('😀'.repeat(150)));
    expect(same.status).toBe(200);
    const status = await statusBy('email', 'emoji@example.com');
    expect(status.body.purposes.newsletter.record_id).toBe(same.body.record_id);
  });

  it('refuses an external id homed in another country for a person found by e-mail address here: one id, one person', async () => {
    expect((await record({ email: 'ann@example.com' }, us)).status).toBe(201);
    const bob = await record({ email: 'bob@example.com', external_id: 'crm-shared' }, de);
    expect(bob.status).toBe(201);
    // crm-shared is Bob's, in DE: giving it to Ann in US would make one id name two people.
    const given = await record({ email: 'ann@example.com', external_id: 'crm-shared' }, us);
    expect(given.status).toBe(422);
    expect(given.body.details).toEqual([{ field: 'subject.external_id', reason: 'belongs to another person of this application' }]);
    const imported = await importRows([row({ email: 'ann@example.com', external_id: 'crm-shared' })], us);
    expect(imported.body.rows[0]).toMatchObject({ outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to another person of this application' }] });
    expect((await usDb.query(`SELECT external_id FROM decisions.subjects WHERE email = 'ann@example.com'`)).rows).toEqual([{ external_id: null }]);
    // Bob is still answered by his id, in his country; US sends there.
    expect((await statusBy('external_id', 'crm-shared', de)).body.subject.id).toBe(bob.body.consent_record.subject.id);
    expect((await statusBy('external_id', 'crm-shared', us)).status).toBe(421);
  });

  it('keeps the e-mail address a record gives a person recorded by external id alone: one person, in one country', async () => {
    const subject = await api('POST', `/api/v1/applications/${applicationId}/subjects`, { external_id: 'crm-first' }, de);
    expect(subject.status).toBe(201);
    const first = await record({ email: 'cleo@example.com', external_id: 'crm-first' }, de);
    expect(first.status).toBe(201);
    expect(first.body.consent_record.subject.id).toBe(subject.body.id);

    // Named by the address alone afterwards, she is the same person: here, and at the other country's gateway.
    const later = await record({ email: 'CLEO@example.com' }, de, declined);
    expect(later.status).toBe(201);
    expect(later.body.consent_record.subject.id).toBe(subject.body.id);
    expect(later.body.consent_record.supersedes).toBe(first.body.consent_record.record_id);
    const byEmail = await statusBy('email', 'cleo@example.com', de);
    expect([byEmail.status, byEmail.body.subject?.id]).toEqual([200, subject.body.id]);
    const elsewhere = await record({ email: 'cleo@example.com' }, us);
    expect([elsewhere.status, elsewhere.body]).toEqual([421, { message: expect.any(String), code: 'wrong_country', home_country: 'DE', request_id: expect.any(String) }]);
    expect((await usDb.query(`SELECT count(*)::int AS n FROM decisions.subjects WHERE email = 'cleo@example.com'`)).rows[0].n).toBe(0);
    expect((await deDb.query(`SELECT email, external_id FROM decisions.subjects WHERE id = $1`, [subject.body.id])).rows).toEqual([{ email: 'cleo@example.com', external_id: 'crm-first' }]);

    // An address that is someone else's is not given to her.
    expect((await record({ email: 'dora@example.com' }, us)).status).toBe(201);
    await api('POST', `/api/v1/applications/${applicationId}/subjects`, { external_id: 'crm-second' }, de);
    const taken = await record({ email: 'dora@example.com', external_id: 'crm-second' }, de);
    expect([taken.status, taken.body.details]).toEqual([422, [{ field: 'subject.email', reason: 'belongs to another person of this application' }]]);
    expect((await deDb.query(`SELECT email FROM decisions.subjects WHERE external_id = 'crm-second'`)).rows).toEqual([{ email: null }]);
  });

  describe('the subjects endpoint binds an identifier to the person the other one names, as the Record API does', () => {
    it('keeps an external id given for a person recorded by e-mail address alone: found by it afterwards, and homed with them', async () => {
      const erin = await subjects(us).create({ email: 'erin@example.com' });
      expect([erin.status, erin.body.external_id]).toEqual([201, null]);
      const bound = await subjects(us).create({ email: 'ERIN@example.com', external_id: ' crm-erin ' });
      expect([bound.status, bound.body]).toEqual([200, { ...erin.body, external_id: 'crm-erin' }]);
      expect((await usDb.query(`SELECT email, external_id FROM decisions.subjects WHERE id = $1`, [erin.body.id])).rows).toEqual([{ email: 'erin@example.com', external_id: 'crm-erin' }]);

      // Found by it: the lookup, and consent_status of a record made by the address alone.
      const found = await subjects(us).find('external_id', 'crm-erin');
      expect([found.status, found.body.id]).toEqual([200, erin.body.id]);
      const recorded = await record({ email: 'erin@example.com' }, us);
      expect(recorded.body.consent_record.subject.id).toBe(erin.body.id);
      const status = await statusBy('external_id', 'crm-erin', us);
      expect([status.status, status.body.subject?.id, status.body.purposes?.newsletter?.record_id]).toEqual([200, erin.body.id, recorded.body.consent_record.record_id]);

      // The directory learnt it, homed where she is, and the other country sends there.
      expect(await directoryHome(usDb, 'external_id', 'crm-erin')).toBe('US');
      await eventually(async () => (await directoryHome(deDb, 'external_id', 'crm-erin')) === 'US');
      const elsewhere = await subjects(de).find('external_id', 'crm-erin');
      expect([elsewhere.status, elsewhere.body.home_country]).toEqual([421, 'US']);
      expect((await record({ email: 'erin-two@example.com', external_id: 'crm-erin' }, de)).status).toBe(421);
      expect((await deDb.query(`SELECT count(*)::int AS n FROM decisions.subjects WHERE external_id = 'crm-erin'`)).rows[0].n).toBe(0);

      // Given again with both: the same person (200), nothing changes.
      const again = await subjects(us).create({ email: 'erin@example.com', external_id: 'crm-erin' });
      expect([again.status, again.body]).toEqual([200, bound.body]);
    });

    it('keeps an e-mail address given for a person recorded by external id alone', async () => {
      const fay = await subjects(de).create({ external_id: 'crm-fay' });
      expect([fay.status, fay.body.email]).toEqual([201, null]);
      const bound = await subjects(de).create({ email: 'Fay@example.com', external_id: 'crm-fay' });
      expect([bound.status, bound.body]).toEqual([200, { ...fay.body, email: 'fay@example.com' }]);
      const found = await subjects(de).find('email', 'fay@example.com');
      expect([found.status, found.body.id]).toEqual([200, fay.body.id]);
      expect(await directoryHome(deDb, 'email', 'fay@example.com')).toBe('DE');
      await eventually(async () => (await directoryHome(usDb, 'email', 'fay@example.com')) === 'DE');
      const elsewhere = await subjects(us).create({ email: 'fay@example.com' });
      expect([elsewhere.status, elsewhere.body.home_country]).toEqual([421, 'DE']);
    });

    it('binds at a decision session naming the person by both, by the same rules', async () => {
      const gus = await subjects(us).create({ email: 'gus@example.com' });
      const session = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'gus@example.com', external_id: 'crm-gus' } });
      expect(session.status).toBe(201);
      const found = await subjects(us).find('external_id', 'crm-gus');
      expect([found.status, found.body.id]).toEqual([200, gus.body.id]);
      // Another external id for him now is refused, naming the session's field.
      const other = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email: 'gus@example.com', external_id: 'crm-gus-2' } });
      expect([other.status, other.body.details]).toEqual([422, [{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }]]);
    });

    it('refuses an identifier the directory homes in another country (it is another person there), and writes nothing', async () => {
      expect((await subjects(us).create({ email: 'hal@example.com' })).status).toBe(201);
      expect((await subjects(de).create({ email: 'ivy@example.com', external_id: 'crm-ivy' })).status).toBe(201);
      await eventually(async () => (await directoryHome(usDb, 'external_id', 'crm-ivy')) === 'DE');
      const given = await subjects(us).create({ email: 'hal@example.com', external_id: 'crm-ivy' });
      expect([given.status, given.body.details]).toEqual([422, [{ field: 'external_id', reason: 'belongs to another person of this application' }]]);
      expect((await usDb.query(`SELECT external_id FROM decisions.subjects WHERE email = 'hal@example.com'`)).rows).toEqual([{ external_id: null }]);
      expect(await directoryHome(usDb, 'external_id', 'crm-ivy')).toBe('DE');

      // The other way round: an address homed elsewhere for a person recorded here by external id alone.
      expect((await subjects(us).create({ external_id: 'crm-jay' })).status).toBe(201);
      await eventually(async () => (await directoryHome(usDb, 'email', 'ivy@example.com')) === 'DE');
      const address = await subjects(us).create({ email: 'ivy@example.com', external_id: 'crm-jay' });
      expect([address.status, address.body.details]).toEqual([422, [{ field: 'email', reason: 'belongs to another person of this application' }]]);
      expect((await usDb.query(`SELECT email FROM decisions.subjects WHERE external_id = 'crm-jay'`)).rows).toEqual([{ email: null }]);

      // Neither named here: the person lives where the external id is homed (421), as before.
      const neither = await subjects(us).create({ email: 'nobody-here@example.com', external_id: 'crm-ivy' });
      expect([neither.status, neither.body.home_country]).toEqual([421, 'DE']);
    });

    it('binds one of two external ids sent for the same person at the same moment; the other is refused and leaves nothing behind', async () => {
      for (let n = 0; n < 4; n++) {
        const person = await subjects(us).create({ email: `race${n}@example.com` });
        expect(person.status).toBe(201);
        const ids = [`crm-race${n}-a`, `crm-race${n}-b`];
        const answers = await Promise.all(ids.map((externalId) => subjects(us).create({ email: `race${n}@example.com`, external_id: externalId })));
        expect(answers.map((answer) => answer.status).sort()).toEqual([200, 422]);
        const won = answers.findIndex((answer) => answer.status === 200);
        const [winner, loser] = [ids[won], ids[1 - won]];
        expect(answers[won].body).toEqual({ ...person.body, external_id: winner });
        expect(answers[1 - won].body.details).toEqual([{ field: 'external_id', reason: 'the person recorded with this e-mail address has another external_id' }]);
        expect((await usDb.query(`SELECT external_id FROM decisions.subjects WHERE id = $1`, [person.body.id])).rows).toEqual([{ external_id: winner }]);
        expect((await subjects(us).find('external_id', winner)).body.id).toBe(person.body.id);
        expect((await subjects(us).find('external_id', loser)).status).toBe(404);
        // The directory keeps the winner's reference only, in both countries (the loser's claim is released).
        expect(await directoryHome(usDb, 'external_id', winner)).toBe('US');
        expect(await directoryHome(usDb, 'external_id', loser)).toBeUndefined();
        await eventually(async () => (await directoryHome(deDb, 'external_id', loser)) === undefined);
        // So the loser's id is free: another country records someone new under it.
        expect((await subjects(de).create({ external_id: loser })).status).toBe(201);
      }
    });

    it('binds an external id sent for two people at the same moment to one of them; the other is refused', async () => {
      for (let n = 0; n < 4; n++) {
        const people = await Promise.all([0, 1].map((i) => subjects(us).create({ email: `pair${n}-${i}@example.com` })));
        const externalId = `crm-pair${n}`;
        const answers = await Promise.all(people.map((person) => subjects(us).create({ email: person.body.email, external_id: externalId })));
        expect(answers.map((answer) => answer.status).sort()).toEqual([200, 422]);
        const won = answers.findIndex((answer) => answer.status === 200);
        expect(answers[1 - won].body.details).toEqual([{ field: 'external_id', reason: 'belongs to another person of this application than email' }]);
        expect((await usDb.query(`SELECT id FROM decisions.subjects WHERE external_id = $1`, [externalId])).rows).toEqual([{ id: people[won].body.id }]);
        expect((await usDb.query(`SELECT external_id FROM decisions.subjects WHERE id = $1`, [people[1 - won].body.id])).rows).toEqual([{ external_id: null }]);
        expect(await directoryHome(usDb, 'external_id', externalId)).toBe('US');
        expect((await statusBy('external_id', externalId, us)).body.subject?.id).toBe(people[won].body.id);
      }
    });
  });
});
