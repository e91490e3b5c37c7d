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
    // The rate limiter off: the crowd below, sent as fast as a fast host answers, would outrun its
    // default 100 requests/s (burst 200) and be answered 429 instead of racing.
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey, adminToken, country: 'US', peers: [], env: { RATE_LIMIT_RPS: '0' } });
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

  // Many requests at once naming a few people by a few addresses and external ids in every
  // combination (the Record API one by one, imports a few rows at a time), whatever order they meet in.
  it('answers a crowd of requests naming the same few people: every identifier with the one person who has it, the directory homing here exactly those held here', async () => {
    const crowdDecisions = () => ({ newsletter: { decision: Math.random() < 0.5 ? 'granted' : 'declined', default_checked: false, mandatory: false } });
    const emails: string[] = [];
    const externalIds: string[] = [];
    const pick = <T>(values: T[]) => values[Math.floor(Math.random() * values.length)];
    const sent: Array<{ subjects: Array<Record<string, string>>; status: number; body: any }> = [];
    // One decision time for all: records of a person then arrive in the order they are written (a
    // record captured before another one written already is history, kept out of the chain's order).
    const capturedAt = new Date(Date.now() - 60_000).toISOString();

    // Rounds of new people: most races are those of people not recorded yet (claims, binds).
    for (let round = 0; round < 12; round++) {
      const roundEmails = Array.from({ length: 4 }, (_, i) => `crowd-${round}-${i}@example.com`);
      const roundIds = Array.from({ length: 4 }, (_, i) => `crm-crowd-${round}-${i}`);
      emails.push(...roundEmails);
      externalIds.push(...roundIds);
      const subject = (): Record<string, string> => (Math.random() < 0.6 ? { email: pick(roundEmails), external_id: pick(roundIds) } : { email: pick(roundEmails) });
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          for (let k = 0; k < 4; k++) {
            if ((client + k) % 4 === 0) {
              const subjects = [subject(), subject(), subject()];
              const answer = await api('POST', '/api/v1/consent_records/imports', {
                flow_id: flowId,
                dry_run: false,
                records: subjects.map((one) => ({ subject: one, decisions: crowdDecisions(), captured_at: capturedAt })),
              });
              sent.push({ subjects, ...answer });
            } else {
              const one = subject();
              const answer = await api('POST', '/api/v1/consent_records', { flow_id: flowId, subject: one, decisions: crowdDecisions(), captured_at: capturedAt });
              sent.push({ subjects: [one], ...answer });
            }
          }
        }),
      );
    }

    // Every request answered: a record, a refusal naming the external id, or an import's report.
    expect(sent.filter((one) => ![200, 201, 422].includes(one.status)).map((one) => [one.status, one.body])).toEqual([]);
    const people = new Map<string, { email: string | null; external_id: string | null }>(
      (await db.query(`SELECT id, email, external_id FROM decisions.subjects WHERE application_id = $1 AND (email = ANY($2) OR external_id = ANY($3))`, [applicationId, emails, externalIds])).rows.map((row) => [row.id, row]),
    );
    const recorded: Array<{ subject: Record<string, string>; recordId: string }> = [];
    for (const one of sent) {
      if (one.body.import_id !== undefined) {
        one.body.rows.forEach((row: any) => {
          if (row.outcome === 'recorded') recorded.push({ subject: one.subjects[row.index], recordId: row.record_id });
          else expect([row.outcome, row.reasons.map((reason: { field: string }) => reason.field)]).toEqual(['refused', ['subject.external_id']]);
        });
      } else if (one.status === 201) recorded.push({ subject: one.subjects[0], recordId: one.body.consent_record.record_id });
      else expect(one.body.details.map((detail: { field: string }) => detail.field)).toEqual(['subject.external_id']);
    }
    expect(recorded.length).toBeGreaterThan(0);
    // A record's person holds every identifier its request gave.
    const owners = new Map<string, string>(
      (await db.query(`SELECT record_id, subject_id FROM decisions.consent_records WHERE record_id = ANY($1)`, [recorded.map((one) => one.recordId)])).rows.map((row) => [row.record_id, row.subject_id]),
    );
    for (const { subject: given, recordId } of recorded) {
      expect([given, people.get(owners.get(recordId)!)]).toEqual([given, expect.objectContaining({ email: given.email, ...(given.external_id ? { external_id: given.external_id } : {}) })]);
    }

    // Each person's records: one chain.
    const chains = (
      await db.query(
        `SELECT r.subject_id, count(*) FILTER (WHERE r.supersedes IS NULL)::int AS firsts,
                count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM decisions.consent_records n WHERE n.supersedes = r.record_id))::int AS newest,
                count(*)::int AS records, count(DISTINCT r.supersedes)::int AS superseded
           FROM decisions.consent_records r WHERE r.subject_id = ANY($1) GROUP BY 1`,
        [[...people.keys()]],
      )
    ).rows;
    for (const chain of chains) expect(chain).toMatchObject({ firsts: 1, newest: 1, superseded: chain.records - 1 });

    // The directory homes here exactly the identifiers a person here holds: every one of them (else
    // another country could record the same person), and none that a refused request, or a try
    // decided again, left naming no one.
    const reference = (kind: 'email' | 'external_id', value: string) => subjectReference(subjectRefKey, applicationId, kind, value);
    const held = [...people.values()].flatMap((person) => [
      ...(person.email ? [reference('email', person.email)] : []),
      ...(person.external_id ? [reference('external_id', person.external_id)] : []),
    ]);
    const named = new Map([...emails.map((email) => [reference('email', email), email] as const), ...externalIds.map((id) => [reference('external_id', id), id] as const)]);
    const homed = (await db.query(`SELECT reference FROM residency_router.directory_entries WHERE home_country = 'US' AND reference = ANY($1)`, [[...named.keys()]])).rows.map(
      (row) => row.reference as string,
    );
    expect(held.filter((ref) => !homed.includes(ref)).map((ref) => named.get(ref) ?? ref)).toEqual([]);
    expect(homed.filter((ref) => !held.includes(ref)).map((ref) => named.get(ref) ?? ref)).toEqual([]);
    expect(held.length).toBeGreaterThan(0);
  });
});
