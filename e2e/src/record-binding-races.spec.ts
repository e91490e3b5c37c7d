import { Client } from 'pg';
import { decisionsService } from '@dcr/app-decisions';
import { subjectReference } from '@dcr/domain';
import { InProcessBus } from '@dcr/transport';
import { activeFlowApplication, http, randomSecret, RunningCountry, startCountry, startReplica } from '../support/country-harness';

/**
 * The Record API gives a person found by one identifier the other one a record names (an external id
 * for a person found by e-mail address, an address for one found by external id). Two requests at
 * the same moment, on two replicas of the decisions service (or an import beside a Record API
 * request), may give one person two different identifiers, or one identifier to two people: one of
 * them is kept, and the other request is answered as it would be sent after it (422 on
 * `subject.external_id`), with nothing of it left behind (no record, no directory entry naming no
 * one), never a 201 for an identifier that was not kept.
 */
describe('identifiers bound by the Record API at the same moment', () => {
  let us: RunningCountry;
  let replica: { close(): Promise<void> };
  const adminToken = randomSecret();
  const subjectRefKey = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let flowId: string;
  let db: Client;
  /** How many times each race is run: the two requests meet in the same few milliseconds most times, not every time. */
  const ROUNDS = 8;

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const record = (subject: Record<string, unknown>) =>
    api('POST', '/api/v1/consent_records', { flow_id: flowId, subject, decisions: { newsletter: { decision: 'granted', default_checked: false, mandatory: false } }, captured_at: new Date().toISOString() });
  const importRow = (subject: Record<string, unknown>) =>
    api('POST', '/api/v1/consent_records/imports', { flow_id: flowId, dry_run: false, records: [{ subject, decisions: { newsletter: { decision: 'granted' } }, captured_at: new Date().toISOString() }] });
  const statusBy = (parameter: string, value: string) => api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[${parameter}]=${encodeURIComponent(value)}`);
  const directoryHome = async (kind: 'email' | 'external_id', value: string): Promise<string | undefined> => {
    const { rows } = await db.query(`SELECT home_country FROM residency_router.directory_entries WHERE reference = $1`, [subjectReference(subjectRefKey, applicationId, kind, value)]);
    return rows[0]?.home_country;
  };
  const person = async (id: string) => (await db.query(`SELECT email, external_id FROM decisions.subjects WHERE id = $1`, [id])).rows[0];
  const recordsOf = async (id: string) => (await db.query(`SELECT count(*)::int AS n FROM decisions.consent_records WHERE subject_id = $1`, [id])).rows[0].n as number;
  /** The one answer of two that is 201 and the other, which must be 422 (their order as sent). */
  const oneWon = (answers: Array<{ status: number; body: any }>) => {
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422]);
    const won = answers.findIndex((answer) => answer.status === 201);
    return { won, lost: 1 - won };
  };

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey, adminToken, country: 'US', peers: [] });
    // A second decisions replica: the gateway's requests go to the two in turn, so two requests sent
    // together are written by two writers, as two replicas write them in production.
    replica = await startReplica(us, decisionsService);
    ({ applicationId, apiToken, flowId } = await activeFlowApplication(us, adminToken, { name: 'Signup', pattern: 'standard', purposes: ['newsletter'], consent_duration: 'P1Y' }));
    db = new Client({ connectionString: us.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await replica?.close();
    await us?.close();
  });

  it('keeps one of two external ids given to a person found by e-mail address; the other is refused and leaves nothing behind', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      const email = `two-ids-${n}@example.com`;
      const first = await record({ email });
      expect(first.status).toBe(201);
      const subjectId: string = first.body.consent_record.subject.id;
      const ids = [`crm-${n}-a`, `crm-${n}-b`];
      const answers = await Promise.all(ids.map((externalId) => record({ email, external_id: externalId })));
      const { won, lost } = oneWon(answers);
      expect(answers[won].body.consent_record.subject.id).toBe(subjectId);
      expect(answers[lost].body.details).toEqual([{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }]);
      expect(await person(subjectId)).toEqual({ email, external_id: ids[won] });
      // The loser's record was not written; the winner's was.
      expect(await recordsOf(subjectId)).toBe(2);
      const byWinner = await statusBy('external_id', ids[won]);
      expect([byWinner.status, byWinner.body.subject?.id, byWinner.body.purposes?.newsletter?.record_id]).toEqual([200, subjectId, answers[won].body.consent_record.record_id]);
      expect((await statusBy('external_id', ids[lost])).status).toBe(404);
      // The directory holds the winner's reference only: the loser's id names no one here.
      expect(await directoryHome('external_id', ids[won])).toBe('US');
      expect(await directoryHome('external_id', ids[lost])).toBeUndefined();
    }
  });

  it('gives an external id sent for two people at the same moment to one of them; the other is refused', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      const emails = [`pair-${n}-a@example.com`, `pair-${n}-b@example.com`];
      const firsts = await Promise.all(emails.map((email) => record({ email })));
      const subjectIds: string[] = firsts.map((first) => first.body.consent_record.subject.id);
      const externalId = `crm-pair-${n}`;
      const answers = await Promise.all(emails.map((email) => record({ email, external_id: externalId })));
      const { won, lost } = oneWon(answers);
      expect(answers[lost].body.details).toEqual([{ field: 'subject.external_id', reason: 'belongs to another person of this application than subject.email' }]);
      expect(await person(subjectIds[won])).toEqual({ email: emails[won], external_id: externalId });
      expect(await person(subjectIds[lost])).toEqual({ email: emails[lost], external_id: null });
      expect(await recordsOf(subjectIds[won])).toBe(2);
      expect(await recordsOf(subjectIds[lost])).toBe(1);
      expect((await statusBy('external_id', externalId)).body.subject?.id).toBe(subjectIds[won]);
      expect(await directoryHome('external_id', externalId)).toBe('US');
    }
  });

  it('keeps one of two e-mail addresses given to a person recorded by external id alone; the other is refused and leaves nothing behind', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      const externalId = `crm-alone-${n}`;
      const created = await api('POST', `/api/v1/applications/${applicationId}/subjects`, { external_id: externalId });
      expect(created.status).toBe(201);
      const emails = [`alone-${n}-a@example.com`, `alone-${n}-b@example.com`];
      const answers = await Promise.all(emails.map((email) => record({ email, external_id: externalId })));
      const { won, lost } = oneWon(answers);
      expect(answers[won].body.consent_record.subject.id).toBe(created.body.id);
      expect(answers[lost].body.details).toEqual([{ field: 'subject.external_id', reason: 'belongs to a person of this application recorded with another e-mail address' }]);
      expect(await person(created.body.id)).toEqual({ email: emails[won], external_id: externalId });
      expect(await recordsOf(created.body.id)).toBe(1);
      expect((await db.query(`SELECT count(*)::int AS n FROM decisions.subjects WHERE email = $1`, [emails[lost]])).rows[0].n).toBe(0);
      expect((await statusBy('email', emails[won])).body.subject?.id).toBe(created.body.id);
      expect((await statusBy('email', emails[lost])).status).toBe(404);
      expect(await directoryHome('email', emails[won])).toBe('US');
      expect(await directoryHome('email', emails[lost])).toBeUndefined();
    }
  });

  it('gives an e-mail address sent for two people recorded by external id alone to one of them; the other is refused', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      const externalIds = [`crm-addr-${n}-a`, `crm-addr-${n}-b`];
      const created = await Promise.all(externalIds.map((externalId) => api('POST', `/api/v1/applications/${applicationId}/subjects`, { external_id: externalId })));
      const email = `shared-${n}@example.com`;
      const answers = await Promise.all(externalIds.map((externalId) => record({ email, external_id: externalId })));
      const { won, lost } = oneWon(answers);
      expect(answers[lost].body.details).toEqual([{ field: 'subject.external_id', reason: 'belongs to another person of this application than subject.email' }]);
      expect(await person(created[won].body.id)).toEqual({ email, external_id: externalIds[won] });
      expect(await person(created[lost].body.id)).toEqual({ email: null, external_id: externalIds[lost] });
      expect(await recordsOf(created[lost].body.id)).toBe(0);
      expect((await statusBy('email', email)).body.subject?.id).toBe(created[won].body.id);
    }
  });

  it('decides an import row and a Record API request giving one person two external ids at the same moment the same way', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      const email = `imported-${n}@example.com`;
      const first = await record({ email });
      const subjectId: string = first.body.consent_record.subject.id;
      const [imported, recorded] = await Promise.all([importRow({ email, external_id: `crm-imp-${n}` }), record({ email, external_id: `crm-api-${n}` })]);
      expect(imported.status).toBe(201);
      const [row] = imported.body.rows;
      // Exactly one of the two is kept, and the other is refused for it.
      const importWon = row.outcome === 'recorded';
      expect(recorded.status).toBe(importWon ? 422 : 201);
      const winner = importWon ? `crm-imp-${n}` : `crm-api-${n}`;
      const loser = importWon ? `crm-api-${n}` : `crm-imp-${n}`;
      const refusal = [{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }];
      if (importWon) expect(recorded.body.details).toEqual(refusal);
      else expect([row.outcome, row.reasons]).toEqual(['refused', refusal]);
      expect(await person(subjectId)).toEqual({ email, external_id: winner });
      expect(await recordsOf(subjectId)).toBe(2);
      expect(await directoryHome('external_id', loser)).toBeUndefined();
      expect((await statusBy('external_id', winner)).body.subject?.id).toBe(subjectId);
    }
  });
});
