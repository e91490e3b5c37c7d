import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClaimNewRequest, RESIDENCY_CLAIM_NEW, RESIDENCY_REGISTER_MANY, RESIDENCY_RELEASE, RegisterManyRequest } from '@dcr/contracts';
import { RecordedPurpose } from '@dcr/domain';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient } from '@dcr/transport';
import { defer } from 'rxjs';
import { DataSource } from 'typeorm';
import { decisionsService } from '../src/decisions.service';
import { ConsentRecordChainsAreLinear1765500000000, RECONCILE_FORKED_CHAINS_SQL } from '../src/migrations/1765500000000-consent-record-chains-are-linear';
import { StaleFlowVersion } from '../src/flows/flows.repository';
import { OutboxRelay } from '../src/outbox/outbox';
import { supersedeOlderDecisions } from '../src/records/hosted-supersession';
import { CheckedRow, ImportBatch, RECORD_BATCH_STATEMENTS, RECORD_BATCH_WITHDRAW_SQL, recordBatchNewPeopleInserts } from '../src/records/import-batch';
import { SubjectsService } from '../src/subjects/subjects.service';

/**
 * The Record API's and imports' batch write against the real PostgreSQL. A batch whose people are
 * all new is written by one statement (people, records, events); when another writer records one
 * of those people between the lookup and the write, or a row of the batch withdraws what an earlier
 * row of it granted, the batch goes through the transaction instead, with the same outcome as if it
 * had gone there first: one person row, the record chained to the person's latest one.
 */
describe('ImportBatch: a batch of records', () => {
  const applicationId = 'tp_us_records';
  const flow = { id: 'flw_us_records', version: 1 };
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let batch: ImportBatch;
  /** Runs while the batch asks the directory to home its new people: another writer's commit. */
  let meanwhile: (() => Promise<void>) | undefined;
  /** The directory the batch talks to: reference → home country, and the patterns it was asked. */
  const directory = new Map<string, string>();
  const asked: string[] = [];

  const purposes = (newsletter: RecordedPurpose['status'], analytics: RecordedPurpose['status']): Record<string, RecordedPurpose> => ({
    newsletter: { status: newsletter, basis: 'consent' },
    analytics: { status: analytics, basis: 'consent' },
  });
  const row = (index: number, email: string, decided: Record<string, RecordedPurpose>): CheckedRow => ({
    index,
    email,
    purposes: decided,
    capturedAt: '2026-11-23T10:00:00.000Z',
    fingerprint: '',
    channel: 'controller_attested',
  });
  const count = async (sql: string, values: unknown[]) => (await dataSource.query(sql, values))[0].n as number;
  const eventuallyTrue = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 100 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await check()).toBe(true);
  };

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'record_batches');
    dataSource = database.dataSource;
    const own = {
      send: (pattern: string, request: RegisterManyRequest | ClaimNewRequest) =>
        defer(async () => {
          asked.push(pattern);
          if (pattern === RESIDENCY_CLAIM_NEW) {
            // Homes here whoever the directory does not know; a person's id is never sent (it names its country).
            return {
              claimed: (request as ClaimNewRequest).subjects.map(({ reference, minted_references: minted }) => {
                if (minted !== undefined) throw new Error('a made reference was sent');
                if (directory.has(reference)) return false;
                directory.set(reference, 'US');
                return true;
              }),
            };
          }
          if (pattern !== RESIDENCY_REGISTER_MANY) throw new Error(`unexpected ${pattern}`);
          const run = meanwhile;
          meanwhile = undefined;
          await run?.();
          return {
            home_countries: (request as RegisterManyRequest).subjects.map(({ references, minted_references: minted }) => {
              if (minted !== undefined) throw new Error('a made reference was sent');
              const home = directory.get(references[0]) ?? 'US';
              if (home === 'US') for (const reference of references) directory.set(reference, 'US');
              return home;
            }),
          };
        }),
    };
    const context = { env: { COUNTRY: 'US' } } as unknown as ServiceContext;
    const subjects = {
      newPersonReferences: (_: string, by: { email: string }) => ({ references: [`email:${by.email}`] }),
    } as unknown as SubjectsService;
    const relay = { kick: () => undefined } as unknown as OutboxRelay;
    batch = new ImportBatch(dataSource, subjects, new ServiceClients(own as unknown as CountryClient, new Map()), relay, context);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('writes a batch of new people with their records and events', async () => {
    const emails = ['new-1@example.com', 'new-2@example.com', 'new-3@example.com'];
    const result = await batch.record(applicationId, flow, emails.map((email, i) => row(i, email, purposes('granted', i === 1 ? 'declined' : 'granted'))));

    expect(result.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded', 'recorded']);
    expect([...result.created].sort()).toEqual([0, 1, 2]);
    const people = await dataSource.query(`SELECT "id", "email" FROM "decisions"."subjects" WHERE "email" = ANY($1) ORDER BY "email"`, [emails]);
    expect(people.map((person: { email: string }) => person.email)).toEqual(emails);
    // Each person's id names this country (newSubjectId), so no directory entry is made for it.
    expect(people.map((person: { id: string }) => person.id)).toEqual(emails.map(() => expect.stringMatching(/^sub_us[0-9a-z]{18}$/)));
    const records = await dataSource.query(
      `SELECT r."record_id", r."subject_id", r."status", r."supersedes", s."email" FROM "decisions"."consent_records" r
         JOIN "decisions"."subjects" s ON s."id" = r."subject_id" WHERE s."email" = ANY($1) ORDER BY s."email"`,
      [emails],
    );
    expect(records).toEqual(
      emails.map((email, i) =>
        expect.objectContaining({ email, record_id: result.made.get(i)!.recordId, subject_id: result.made.get(i)!.subjectId, status: 'granted', supersedes: null }),
      ),
    );
    const events = await dataSource.query(`SELECT "type", "data" FROM "decisions"."outbox" WHERE "data"->>'record_id' = ANY($1)`, [
      records.map((record: { record_id: string }) => record.record_id),
    ]);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['consent.granted', 'consent.granted', 'consent.granted']);
  });

  it('keeps one person when another writer records them between the lookup and the write, and chains to their record', async () => {
    const email = 'raced@example.com';
    const earlier = await batch.record(applicationId, flow, [row(0, 'someone-else@example.com', purposes('granted', 'granted'))]);
    const earlierRecord = earlier.made.get(0)!.recordId;
    // The other writer: the same person, already with a record, committed after this batch looked for them.
    meanwhile = async () => {
      await dataSource.query(`UPDATE "decisions"."subjects" SET "email" = $1 WHERE "id" = $2`, [email, earlier.made.get(0)!.subjectId]);
    };

    const result = await batch.record(applicationId, flow, [row(0, email, purposes('granted', 'declined')), row(1, 'raced-companion@example.com', purposes('granted', 'granted'))]);

    expect(result.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded']);
    expect(result.made.get(0)).toMatchObject({ subjectId: earlier.made.get(0)!.subjectId, supersedes: earlierRecord });
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = $1`, [email])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = 'raced-companion@example.com'`, [])).toBe(1);
    // The analytics purpose moved from granted to declined: the predecessor is withdrawn for it.
    const [predecessor] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [earlierRecord]);
    expect(predecessor.withdrawals).toEqual([expect.objectContaining({ purpose: 'analytics', channel: 'newer_record' })]);
  });

  it('refuses a new person whose external id another writer gave someone else meanwhile, and writes no record without its person', async () => {
    // The other writer: a person with another address and this row's external id, committed after this batch looked.
    meanwhile = async () => {
      await dataSource.query(`INSERT INTO "decisions"."subjects" ("id", "application_id", "email", "external_id", "created_at") VALUES ('sub_usraceother000000000', $1, 'race-other@example.com', 'race-z', now())`, [applicationId]);
    };
    const result = await batch.record(applicationId, flow, [
      { ...row(0, 'race-a@example.com', purposes('granted', 'granted')), externalId: 'race-z' },
      row(1, 'race-b@example.com', purposes('granted', 'declined')),
    ]);
    expect(result.outcomes[0]).toEqual({ index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to a person of this application recorded with another e-mail address' }] });
    expect(result.outcomes[1]).toMatchObject({ outcome: 'recorded' });
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = 'race-a@example.com'`, [])).toBe(0);
    // Every record has its person.
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."consent_records" r WHERE NOT EXISTS (SELECT 1 FROM "decisions"."subjects" s WHERE s."id" = r."subject_id")`, [])).toBe(0);
  });

  it('refuses a new person the directory homes in another country, naming it, writes nothing for them and releases nothing', async () => {
    directory.set('email:abroad@example.com', 'DE');
    asked.length = 0;
    const result = await batch.record(applicationId, flow, [row(0, 'abroad@example.com', purposes('granted', 'granted')), row(1, 'at-home@example.com', purposes('granted', 'granted'))]);
    expect(result.outcomes).toEqual([
      { index: 0, outcome: 'refused', reasons: [{ field: 'subject', reason: "the person's home country is DE; import them there" }] },
      { index: 1, outcome: 'recorded', record_id: result.made.get(1)!.recordId },
    ]);
    expect(result.elsewhere).toEqual(new Map([[0, 'DE']]));
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = 'abroad@example.com'`, [])).toBe(0);
    // The entry is another country's: nothing of it is the batch's to release.
    expect(asked).not.toContain(RESIDENCY_RELEASE);
  });

  it('writes a batch of new people by the transaction when PostgreSQL ends its one-statement insert as a deadlock victim (it failed the request)', async () => {
    // Two batches giving two new people each the other's external ids in the opposite order wait for
    // each other inside their single statements; PostgreSQL ends one. Made certain here: the first
    // insert of this person is ended with the deadlock's SQLSTATE by a trigger (the sequence counts
    // across rollbacks), the same error the server gives a real victim.
    await dataSource.query(`CREATE SEQUENCE "decisions"."test_deadlock_once"`);
    await dataSource.query(`CREATE FUNCTION "decisions"."test_deadlock_once"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW."email" = 'deadlock-victim@example.com' AND nextval('"decisions"."test_deadlock_once"') = 1 THEN
          RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01';
        END IF;
        RETURN NEW;
      END $$`);
    await dataSource.query(`CREATE TRIGGER "test_deadlock_once" BEFORE INSERT ON "decisions"."subjects" FOR EACH ROW EXECUTE FUNCTION "decisions"."test_deadlock_once"()`);
    try {
      const result = await batch.record(applicationId, flow, [
        { ...row(0, 'deadlock-victim@example.com', purposes('granted', 'granted')), externalId: 'deadlock-x' },
        { ...row(1, 'deadlock-companion@example.com', purposes('granted', 'declined')), externalId: 'deadlock-y' },
      ]);
      expect(result.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded']);
      const [{ n: tries }] = await dataSource.query(`SELECT last_value::int AS n FROM "decisions"."test_deadlock_once"`);
      expect(tries).toBe(2); // ended once, then written
      const people = await dataSource.query(`SELECT "email", "external_id" FROM "decisions"."subjects" WHERE "email" LIKE 'deadlock-%' ORDER BY "email"`);
      expect(people).toEqual([
        { email: 'deadlock-companion@example.com', external_id: 'deadlock-y' },
        { email: 'deadlock-victim@example.com', external_id: 'deadlock-x' },
      ]);
      expect(await count(`SELECT count(*)::int AS n FROM "decisions"."consent_records" WHERE "record_id" = ANY($1)`, [[...result.made.values()].map((made) => made.recordId)])).toBe(2);
    } finally {
      await dataSource.query(`DROP TRIGGER "test_deadlock_once" ON "decisions"."subjects"`);
      await dataSource.query(`DROP FUNCTION "decisions"."test_deadlock_once"()`);
      await dataSource.query(`DROP SEQUENCE "decisions"."test_deadlock_once"`);
    }
  });

  it('writes against the newest records read with the people when they still are, and reads them again when another writer changed one', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'latest-read@example.com', purposes('granted', 'granted'))])).made.values();
    const readLatest = jest.spyOn(RECORD_BATCH_STATEMENTS.latest, 'rows');
    try {
      // Read with the people (as the writer's people stage does), unchanged at the write: not read again.
      const people = await batch.knownAndClaimed(applicationId, [{ email: 'latest-read@example.com' }], { lookUpFirst: true, flowId: flow.id });
      expect(people.latest).toEqual(
        new Map([[first.subjectId, { recordId: first.recordId, flowVersion: 1, purposes: purposes('granted', 'granted'), withdrawals: [], capturedAt: Date.parse('2026-11-23T10:00:00.000Z'), recordedAt: expect.any(String), rowVersion: expect.stringMatching(/^\d+$/) }]]),
      );
      // Its recorded_at to the microsecond, as the table holds it (the record that supersedes it is recorded after it).
      const recordedAt = people.latest!.get(first.subjectId)!.recordedAt!;
      expect(recordedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      const [{ same }] = await dataSource.query(`SELECT "recorded_at" = $2::timestamptz AS "same" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [first.recordId, recordedAt]);
      expect(same).toBe(true);
      const second = await batch.record(applicationId, flow, [row(0, 'latest-read@example.com', purposes('granted', 'declined'))], people.known, people);
      expect(second.made.get(0)).toMatchObject({ supersedes: first.recordId });
      expect(readLatest).not.toHaveBeenCalled();

      // Read, then another writer records the person: the write finds the newest record changed,
      // writes nothing against the old one, reads it again and supersedes the other writer's record.
      const stale = await batch.knownAndClaimed(applicationId, [{ email: 'latest-read@example.com' }], { lookUpFirst: true, flowId: flow.id });
      const other = await batch.record(applicationId, flow, [row(0, 'latest-read@example.com', purposes('declined', 'declined'))]);
      readLatest.mockClear();
      const third = await batch.record(applicationId, flow, [row(0, 'latest-read@example.com', purposes('granted', 'granted'))], stale.known, stale);
      expect(readLatest).toHaveBeenCalledTimes(1);
      expect(third.made.get(0)).toMatchObject({ supersedes: other.made.get(0)!.recordId });
      const chain = await dataSource.query(
        `SELECT "record_id", "supersedes" FROM "decisions"."consent_records" WHERE "subject_id" = $1 ORDER BY "recorded_at"`,
        [first.subjectId],
      );
      expect(chain.map((record: { supersedes: string | null }) => record.supersedes)).toEqual([null, first.recordId, second.made.get(0)!.recordId, other.made.get(0)!.recordId]);
      // One event per record and withdrawal: nothing of the write that found the record changed.
      const events = await dataSource.query(`SELECT "type" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1 OR "data"->>'superseded_by' = $1`, [third.made.get(0)!.recordId]);
      expect(events.map((event: { type: string }) => event.type).sort()).toEqual(['consent.granted']);
    } finally {
      readLatest.mockRestore();
    }
  });

  /** A flow of two consent purposes (newsletter, analytics) for the hosted-consent tests. */
  const hostedFlowNamed = async (flowId: string) => {
    await dataSource.query(
      `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
       VALUES ($1, 1, $2, 'active', $3, 'fp', 'US', 1, now(), now())`,
      [flowId, applicationId, JSON.stringify({ purposes: [{ key: 'newsletter', basis: 'consent', takes_decision: true, label: 'Newsletter' }, { key: 'analytics', basis: 'consent', takes_decision: true, label: 'Analytics' }] })],
    );
    return { id: flowId, version: 1 };
  };
  /** A consent the person completed on the hosted pages (`dcs_us_<name>`, record `rec_us_<name>`), granting both purposes. */
  const insertHostedConsent = (on: { query(sql: string, values: unknown[]): Promise<unknown> }, name: string, flowId: string, subjectId: string, completedAt: string) =>
    on.query(
      `INSERT INTO "decisions"."decision_sessions"
         ("token_hash", "id", "application_id", "kind", "path", "status", "outcome", "created_via", "delivery_mode", "locale", "flow_id", "flow_version",
          "subject_id", "purpose_decisions", "purpose_outcomes", "completed_at", "record_id", "expires_at", "created_at", "updated_at")
       VALUES ($5, $6, $1, 'consent', 'informed', 'fulfilled', 'granted', 'decisions', 'embed', 'en', $2, 1,
          $3, '{"newsletter": true, "analytics": true}', '{"newsletter": "granted", "analytics": "granted"}', $4, $7, now() + interval '1 day', now(), now())`,
      [applicationId, flowId, subjectId, completedAt, `hash-${name}`, `dcs_us_${name}`, `rec_us_${name}`],
    );
  const at = (minutes: number) => new Date(Date.parse('2026-11-23T10:00:00.000Z') + minutes * 60_000).toISOString();

  it('takes back from a hosted consent completed after the people were read: the write without locks finds it and the transaction writes', async () => {
    const flowId = 'flw_us_hosted_meanwhile';
    const hostedFlow = await hostedFlowNamed(flowId);
    const [first] = (await batch.record(applicationId, hostedFlow, [row(0, 'hosted-meanwhile@example.com', purposes('granted', 'granted'))])).made.values();
    // Read with the people, as the writer's people stage does: no hosted consent stands yet.
    const people = await batch.knownAndClaimed(applicationId, [{ email: 'hosted-meanwhile@example.com' }], { lookUpFirst: true, flowId });
    expect(people.hosted).toEqual(new Set());
    // Then the person completes one on the hosted pages, granting both.
    await insertHostedConsent(dataSource, 'hosted_meanwhile', flowId, first.subjectId, at(5));
    // A record declining analytics, decided after it, written with what was read before.
    const later = { ...row(0, 'hosted-meanwhile@example.com', purposes('granted', 'declined')), capturedAt: at(10) };
    const result = await batch.record(applicationId, hostedFlow, [later], people.known, people);
    expect(result.made.get(0)).toMatchObject({ supersedes: first.recordId });
    const [{ withdrawals }] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."decision_sessions" WHERE "id" = 'dcs_us_hosted_meanwhile'`);
    expect(withdrawals).toEqual([{ purpose: 'analytics', at: at(10), channel: 'newer_record' }]);
    const events = await dataSource.query(`SELECT "type", "data" FROM "decisions"."outbox" WHERE "data"->>'record_id' = 'rec_us_hosted_meanwhile'`);
    expect(events).toEqual([{ type: 'consent.purpose_revoked', data: expect.objectContaining({ superseded_by: result.made.get(0)!.recordId, withdrawn: ['analytics'], channel: 'newer_record' }) }]);
  });

  /** Another writer's record of a person (by default in the test's flow, declining both, decided at the rows' time). */
  const insertOtherRecord = (
    on: { query(sql: string, values: unknown[]): Promise<unknown> },
    recordId: string,
    subjectId: string,
    supersedes: string | null,
    { flowId = flow.id, decided = purposes('declined', 'declined'), capturedAt = '2026-11-23T10:00:00Z' }: { flowId?: string; decided?: Record<string, RecordedPurpose>; capturedAt?: string } = {},
  ) =>
    on.query(
      `INSERT INTO "decisions"."consent_records" ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at", "supersedes", "withdrawals")
       VALUES ($1, $2, $3, 1, $4, $5, $6, 'controller_attested', $7, now(), $8, '[]')`,
      [recordId, applicationId, flowId, subjectId, JSON.stringify(decided), Object.values(decided).some((purpose) => purpose.status === 'granted') ? 'granted' : 'declined', capturedAt, supersedes],
    );
  const recordMarks = async (recordId: string) =>
    (await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [recordId]))[0].withdrawals as Array<Record<string, unknown>>;

  it('takes back from a hosted consent completed while the write without locks runs: the completion touched the newest record, so the write waits, fails its check and goes through the transaction', async () => {
    const flowId = 'flw_us_hosted_same_moment';
    const hostedFlow = await hostedFlowNamed(flowId);
    const email = 'hosted-same-moment@example.com';
    const [first] = (await batch.record(applicationId, hostedFlow, [row(0, email, purposes('granted', 'granted'))])).made.values();
    const people = await batch.knownAndClaimed(applicationId, [{ email }], { lookUpFirst: true, flowId });
    expect(people.hosted).toEqual(new Set());
    // The hosted consent's completing transaction has done what completion does to older decisions, and has not committed.
    const completing = dataSource.createQueryRunner();
    await completing.startTransaction();
    try {
      await insertHostedConsent(completing, 'hosted_same_moment', flowId, first.subjectId, at(5));
      const session = { id: 'dcs_us_hosted_same_moment', applicationId, subjectId: first.subjectId, flowId, recordId: 'rec_us_hosted_same_moment' };
      await supersedeOlderDecisions(completing.manager, session, purposes('granted', 'granted'), new Date(at(5)));
      // A record declining analytics, decided after it, written with what was read before.
      const writing = batch.record(applicationId, hostedFlow, [{ ...row(0, email, purposes('granted', 'declined')), capturedAt: at(10) }], people.known, people);
      let settled = false;
      void writing.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false); // waiting for the completion: without the touch it wrote at once, blind to the consent
      await completing.commitTransaction();
      const result = await writing;
      expect(result.made.get(0)).toMatchObject({ supersedes: first.recordId });
      const [{ withdrawals }] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."decision_sessions" WHERE "id" = 'dcs_us_hosted_same_moment'`);
      expect(withdrawals).toEqual([{ purpose: 'analytics', at: at(10), channel: 'newer_record' }]);
    } finally {
      if (completing.isTransactionActive) await completing.rollbackTransaction();
      await completing.release();
    }
  });

  it('takes back, on a hosted consent\'s completion, from the record a write without locks committed at that moment, not from the record before it', async () => {
    const flowId = 'flw_us_hosted_after_write';
    await hostedFlowNamed(flowId);
    const [first] = (await batch.record(applicationId, { id: flowId, version: 1 }, [row(0, 'hosted-after-write@example.com', purposes('granted', 'granted'))])).made.values();
    // A write without locks in flight: the newest record locked as its check locks it, its successor (granting both) inserted, not committed.
    const writer = dataSource.createQueryRunner();
    await writer.startTransaction();
    try {
      await writer.query(`SELECT 1 FROM "decisions"."consent_records" WHERE "record_id" = $1 FOR SHARE`, [first.recordId]);
      await insertOtherRecord(writer, 'rec_us_written_meanwhile', first.subjectId, first.recordId, { flowId, decided: purposes('granted', 'granted'), capturedAt: at(3) });
      // The person completes a consent declining analytics.
      const completing = dataSource.transaction(async (manager) => {
        await insertHostedConsent(manager, 'hosted_after_write', flowId, first.subjectId, at(5));
        const session = { id: 'dcs_us_hosted_after_write', applicationId, subjectId: first.subjectId, flowId, recordId: 'rec_us_hosted_after_write' };
        await supersedeOlderDecisions(manager, session, purposes('granted', 'declined'), new Date(at(5)));
      });
      let settled = false;
      void completing.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false); // its touch of the newest record waits for the write
      await writer.commitTransaction();
      await completing;
      expect(await recordMarks('rec_us_written_meanwhile')).toEqual([expect.objectContaining({ purpose: 'analytics', at: at(5), channel: 'newer_record' })]);
      expect(await recordMarks(first.recordId)).toEqual([]);
    } finally {
      if (writer.isTransactionActive) await writer.rollbackTransaction();
      await writer.release();
    }
  });
  const successorsOf = async (recordId: string) =>
    (await dataSource.query(`SELECT "record_id" FROM "decisions"."consent_records" WHERE "supersedes" = $1`, [recordId])).map((row: { record_id: string }) => row.record_id);

  it('refuses a fork of a chain in the database: a second record superseding the same one', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'fork@example.com', purposes('granted', 'granted'))])).made.values();
    await insertOtherRecord(dataSource, 'rec_us_fork_one', first.subjectId, first.recordId);
    await expect(insertOtherRecord(dataSource, 'rec_us_fork_two', first.subjectId, first.recordId)).rejects.toMatchObject({ code: '23505', constraint: 'UQ_consent_records_successor' });
    expect(await successorsOf(first.recordId)).toEqual(['rec_us_fork_one']);
  });

  it('writes a batch that extends chains without locks; another writer extending one meanwhile makes it wait, fail and supersede that writer\'s record', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'held@example.com', purposes('granted', 'granted'))])).made.values();
    const people = await batch.knownAndClaimed(applicationId, [{ email: 'held@example.com' }], { lookUpFirst: true, flowId: flow.id });
    // Another writer records the person (in a transaction not committed yet): the batch's snapshot
    // cannot see it, so only the database's refusal of a second successor stops a fork.
    const other = dataSource.createQueryRunner();
    await other.startTransaction();
    await insertOtherRecord(other, 'rec_us_held_other', first.subjectId, first.recordId);
    const readLatest = jest.spyOn(RECORD_BATCH_STATEMENTS.latest, 'rows');
    try {
      const writing = batch.record(applicationId, flow, [row(0, 'held@example.com', purposes('granted', 'granted'))], people.known, people);
      let settled = false;
      void writing.then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(settled).toBe(false); // waiting for the other writer's insert to commit or go
      // Not waiting for a lock: the write took none (asked on the other writer's connection, as the pool is small;
      // in this test's database only, since tests running beside it take advisory locks in theirs).
      expect((await other.query(`SELECT count(*)::int AS n FROM pg_locks WHERE "locktype" = 'advisory' AND "database" = (SELECT oid FROM pg_database WHERE datname = current_database())`))[0].n).toBe(0);
      await other.commitTransaction();
      await other.release();
      const written = await writing;
      expect(written.made.get(0)).toMatchObject({ supersedes: 'rec_us_held_other' });
      expect(readLatest).toHaveBeenCalledTimes(1); // read again, in the transaction
      expect(await successorsOf(first.recordId)).toEqual(['rec_us_held_other']);
      expect(await successorsOf('rec_us_held_other')).toEqual([written.made.get(0)!.recordId]);
    } finally {
      readLatest.mockRestore();
    }
  });

  it('checks the newest records read when a row written without locks was decided before them (recorded late), which no index would catch', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'decided-late@example.com', purposes('granted', 'granted'))])).made.values();
    const people = await batch.knownAndClaimed(applicationId, [{ email: 'decided-late@example.com' }], { lookUpFirst: true, flowId: flow.id });
    // Another writer records the person after the read: the newest record is now theirs.
    const other = await batch.record(applicationId, flow, [row(0, 'decided-late@example.com', purposes('declined', 'declined'))]);
    expect(other.made.get(0)).toMatchObject({ supersedes: first.recordId });
    // A decision made the day before both: it supersedes nothing, and is superseded by the record made
    // after it, the first (the other writer's came after that one, at the same time): its place in
    // the chain is read under the batch's locks, not taken from the stale read.
    const late = { ...row(0, 'decided-late@example.com', purposes('granted', 'declined')), capturedAt: '2026-11-22T10:00:00.000Z' };
    const readChains = jest.spyOn(RECORD_BATCH_STATEMENTS.chains, 'rows');
    try {
      const written = await batch.record(applicationId, flow, [late], people.known, people);
      expect(written.made.get(0)).toMatchObject({ supersedes: null, supersededBy: first.recordId });
      expect(readChains).toHaveBeenCalledTimes(1);
    } finally {
      readChains.mockRestore();
    }
  });

  it('reads no chain for rows in order, and for a late row the records around it: it withdraws from the one made before it and carries what the person withdrew there since', async () => {
    const readChains = jest.spyOn(RECORD_BATCH_STATEMENTS.chains, 'rows');
    try {
      const email = 'between@example.com';
      const at = (time: string) => `2026-11-23T${time}:00.000Z`;
      const [r1] = (await batch.record(applicationId, flow, [{ ...row(0, email, purposes('granted', 'granted')), capturedAt: at('10:00') }])).made.values();
      // The person withdraws the second purpose on it at 10:45 (as their records page does).
      await dataSource.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = $2::jsonb WHERE "record_id" = $1`, [
        r1.recordId,
        JSON.stringify([{ purpose: Object.keys(purposes('granted', 'granted'))[1], at: at('10:45'), channel: 'own_records' }]),
      ]);
      const [r2] = (await batch.record(applicationId, flow, [{ ...row(0, email, purposes('declined', 'granted')), capturedAt: at('12:00') }])).made.values();
      expect(readChains).not.toHaveBeenCalled();
      const [r3] = (await batch.record(applicationId, flow, [{ ...row(0, email, purposes('granted', 'granted')), capturedAt: at('10:30') }])).made.values();
      expect(readChains).toHaveBeenCalledTimes(1);
      expect(r3).toMatchObject({ supersedes: null, supersededBy: r2.recordId });
      const [first, second] = Object.keys(purposes('granted', 'granted'));
      const marks = async (recordId: string) =>
        (await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [recordId]))[0].withdrawals.map(
          (mark: { purpose?: string; at: string; channel: string }) => [mark.purpose, mark.channel, mark.at === at('10:45') ? '10:45' : 'now'],
        );
      // R1: the person's own, then R2's newer-record withdrawal; R3 withdraws nothing more there (it grants both).
      expect(await marks(r1.recordId)).toEqual([[second, 'own_records', '10:45'], [first, 'newer_record', 'now']]);
      // R3 carries the person's withdrawal (made after R3's decision), and R2 withdraws the first purpose from it.
      expect(await marks(r3.recordId)).toEqual([[second, 'own_records', '10:45'], [first, 'newer_record', 'now']]);
      const events = await dataSource.query(
        `SELECT "type", "data", "occurred_at" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1 AND "type" LIKE 'consent.%revoked' ORDER BY "id"`,
        [r3.recordId],
      );
      expect(events.map((event: { type: string; data: Record<string, unknown>; occurred_at: Date }) => [event.type, event.data.withdrawn, event.data.channel, event.data.carried_from ?? event.data.superseded_by])).toEqual([
        ['consent.purpose_revoked', [second], 'own_records', r1.recordId],
        ['consent.purpose_revoked', [first], 'newer_record', r2.recordId],
      ]);
      // The person's time is the event's `withdrawn_at` (the receipt's `consent withdrawn`); the event
      // itself occurred when R3 was recorded, not before R3's own consent.granted: a receiver ordering
      // a record's events by `created_at` would otherwise apply the withdrawal before the grant.
      expect(events[0].data.withdrawn_at).toBe(at('10:45'));
      const [granted] = await dataSource.query(`SELECT "occurred_at" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1 AND "type" = 'consent.granted'`, [r3.recordId]);
      expect(new Date(events[0].occurred_at).getTime()).toBeGreaterThanOrEqual(new Date(granted.occurred_at).getTime());
    } finally {
      readChains.mockRestore();
    }
  });

  it('records a record after the one it supersedes even when that one was recorded by a clock ahead, so the chain\'s newest record stays its last', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'ahead@example.com', purposes('granted', 'granted'))])).made.values();
    // Another replica, its clock an hour ahead, records the person's next decision, made at the same moment.
    await dataSource.query(
      `INSERT INTO "decisions"."consent_records" ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at", "supersedes", "withdrawals")
       VALUES ('rec_us_ahead_other', $1, $2, $3, $4, $5, 'declined', 'controller_attested', '2026-11-23T10:00:00Z', now() + interval '1 hour', $6, '[]')`,
      [applicationId, flow.id, flow.version, first.subjectId, JSON.stringify(purposes('declined', 'declined')), first.recordId],
    );
    const second = await batch.record(applicationId, flow, [row(0, 'ahead@example.com', purposes('granted', 'declined'))]);
    expect(second.made.get(0)).toMatchObject({ supersedes: 'rec_us_ahead_other' });
    const [{ after }] = await dataSource.query(
      `SELECT n."recorded_at" > p."recorded_at" AS "after" FROM "decisions"."consent_records" n JOIN "decisions"."consent_records" p ON p."record_id" = n."supersedes" WHERE n."record_id" = $1`,
      [second.made.get(0)!.recordId],
    );
    expect(after).toBe(true);
    // The newest record is the second one: the next supersedes it (it would supersede the other replica's again, refused).
    const third = await batch.record(applicationId, flow, [row(0, 'ahead@example.com', purposes('granted', 'granted'))]);
    expect(third.made.get(0)).toMatchObject({ supersedes: second.made.get(0)!.recordId });
  });

  it('tries a batch\'s transaction again when a writer without locks extended a chain between its read and its insert', async () => {
    const [first] = (await batch.record(applicationId, flow, [row(0, 'retried@example.com', purposes('granted', 'granted'))])).made.values();
    const realLatest = RECORD_BATCH_STATEMENTS.latest.rows.bind(RECORD_BATCH_STATEMENTS.latest);
    let interleaved = false;
    // The transaction reads the newest record under its lock; a writer that takes no lock (a batch
    // extending the chain) commits a successor right after: the insert breaks the chain's uniqueness.
    const readLatest = jest.spyOn(RECORD_BATCH_STATEMENTS.latest, 'rows').mockImplementation(async (on, values) => {
      const read = await realLatest(on, values);
      if (!interleaved) {
        interleaved = true;
        await insertOtherRecord(dataSource, 'rec_us_retried_other', first.subjectId, first.recordId);
      }
      return read;
    });
    try {
      const written = await batch.record(applicationId, flow, [row(0, 'retried@example.com', purposes('granted', 'declined'))]);
      expect(readLatest).toHaveBeenCalledTimes(2);
      expect(written.made.get(0)).toMatchObject({ supersedes: 'rec_us_retried_other' });
      expect(await successorsOf(first.recordId)).toEqual(['rec_us_retried_other']);
      // Nothing of the failed try is left: one record and one event for the written one.
      const events = await dataSource.query(`SELECT "type" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1`, [written.made.get(0)!.recordId]);
      expect(events.map((event: { type: string }) => event.type)).toEqual(['consent.granted']);
    } finally {
      readLatest.mockRestore();
    }
  });

  it('keeps every chain linear and every write answered when many writers record the same people at once, by all three ways', async () => {
    const emails = Array.from({ length: 4 }, (_, i) => `crowd-${i}@example.com`);
    const crowdRow = (index: number, email: string): CheckedRow => ({
      ...row(index, email, Math.random() < 0.5 ? purposes('granted', 'declined') : purposes('declined', 'granted')),
      capturedAt: '2026-11-24T10:00:00.000Z',
    });
    for (const email of emails) await batch.record(applicationId, flow, [{ ...row(0, email, purposes('granted', 'granted')), capturedAt: '2026-11-24T09:00:00.000Z' }]);
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        for (let k = 0; k < 20; k++) {
          const picked = [...new Set([emails[(writer + k) % 4], emails[(writer * 3 + k + 1) % 4]])];
          const rows = picked.map((email, i) => crowdRow(i, email));
          try {
            if ((writer + k) % 3 === 0) await batch.record(applicationId, flow, rows); // the transaction
            else {
              // Read with the people first, as the Record API's writer does: written without locks.
              const people = await batch.knownAndClaimed(applicationId, picked.map((email) => ({ email })), { lookUpFirst: true, flowId: flow.id });
              await batch.record(applicationId, flow, rows, people.known, people);
            }
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
    const people = `SELECT "id" FROM "decisions"."subjects" WHERE "application_id" = $1 AND "email" = ANY($2)`;
    // Each person: one first record, one newest (superseded by none), every other record superseded by exactly one.
    const chains = await dataSource.query(
      `SELECT r."subject_id", count(*) FILTER (WHERE r."supersedes" IS NULL)::int AS "firsts",
              count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM "decisions"."consent_records" n WHERE n."supersedes" = r."record_id"))::int AS "newest",
              count(*)::int AS "records", count(DISTINCT r."supersedes")::int AS "superseded"
         FROM "decisions"."consent_records" r WHERE r."subject_id" IN (${people}) GROUP BY 1`,
      [applicationId, emails],
    );
    expect(chains).toHaveLength(4);
    for (const chain of chains) expect(chain).toMatchObject({ firsts: 1, newest: 1, superseded: chain.records - 1 });
    // One event per record and one per withdrawal: nothing of a write that lost a race is left.
    const [{ records, withdrawals }] = await dataSource.query(
      `SELECT count(*)::int AS "records", COALESCE(sum(jsonb_array_length("withdrawals")), 0)::int AS "withdrawals" FROM "decisions"."consent_records" WHERE "subject_id" IN (${people})`,
      [applicationId, emails],
    );
    const [{ events }] = await dataSource.query(`SELECT count(*)::int AS "events" FROM "decisions"."outbox" WHERE "data"->'subject'->>'id' IN (${people})`, [applicationId, emails]);
    expect(withdrawals).toBeGreaterThan(0);
    expect(events).toBe(records + withdrawals);
  });

  it('writes a batch of new and returning people against the newest records read with the returning ones', async () => {
    const [known] = (await batch.record(applicationId, flow, [row(0, 'mixed-known@example.com', purposes('granted', 'granted'))])).made.values();
    const people = await batch.knownAndClaimed(applicationId, [{ email: 'mixed-known@example.com' }, { email: 'mixed-new@example.com' }], { flowId: flow.id });
    expect([people.known.map((person) => person.id), [...people.claimed.keys()]]).toEqual([[known.subjectId], ['mixed-new@example.com']]);
    const readLatest = jest.spyOn(RECORD_BATCH_STATEMENTS.latest, 'rows');
    try {
      const written = await batch.record(
        applicationId,
        flow,
        [row(0, 'mixed-known@example.com', purposes('granted', 'declined')), row(1, 'mixed-new@example.com', purposes('granted', 'granted'))],
        people.known,
        people,
      );
      expect(readLatest).not.toHaveBeenCalled();
      expect([written.made.get(0)!.supersedes, written.made.get(1)!.supersedes]).toEqual([known.recordId, null]);
      const [predecessor] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [known.recordId]);
      expect(predecessor.withdrawals).toEqual([expect.objectContaining({ purpose: 'analytics', channel: 'newer_record' })]);
    } finally {
      readLatest.mockRestore();
    }
  });

  it('reads the flow version a batch is written against and the people already recorded, in one statement', async () => {
    const version = (n: number, status: string) =>
      dataSource.query(
        `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
         VALUES ('flw_us_lookup', $1, $2, $3, '{"pattern": "consent"}', 'fp', 'US', 1, now(), now())`,
        [n, applicationId, status],
      );
    await version(1, 'superseded');
    await version(2, 'active');
    await version(3, 'draft');
    await batch.record(applicationId, flow, [row(0, 'looked-up@example.com', purposes('granted', 'granted'))]);
    const emails = ['looked-up@example.com', 'never-seen@example.com'];

    const active = await batch.flowAndKnownPeople(applicationId, { id: 'flw_us_lookup' }, emails, []);
    expect(active.flow).toMatchObject({ id: 'flw_us_lookup', version: 2, status: 'active', applicationId, terms: { pattern: 'consent' } });
    expect(active.known).toEqual([{ id: expect.stringMatching(/^sub_/), email: 'looked-up@example.com', external_id: null }]);
    expect((await batch.flowAndKnownPeople(applicationId, { id: 'flw_us_lookup', version: 3 }, emails, [])).flow).toMatchObject({ version: 3, status: 'draft' });
    const none = await batch.flowAndKnownPeople(applicationId, { id: 'flw_us_missing' }, emails, []);
    expect(none.flow).toBeNull();
    expect(none.known).toHaveLength(1);
    expect((await batch.flowAndKnownPeople(applicationId, { id: 'flw_us_lookup', version: 9 }, [], [])).flow).toBeNull();
    // A person named by an external id (the statement with the second lookup).
    await batch.record(applicationId, flow, [{ ...row(0, 'external@example.com', purposes('granted', 'granted')), externalId: 'crm-1' }]);
    const byExternal = await batch.flowAndKnownPeople(applicationId, { id: 'flw_us_lookup' }, ['never-seen@example.com'], ['crm-1', 'crm-unknown']);
    expect(byExternal.flow).toMatchObject({ version: 2 });
    expect(byExternal.known).toEqual([{ id: expect.stringMatching(/^sub_/), email: 'external@example.com', external_id: 'crm-1' }]);
  });

  it('reads a keyed batch\'s idempotency keys used before with its people, claims only the people it will write, and answers the keys as record does', async () => {
    const keyed = (index: number, email: string, key: string, fingerprint: string): CheckedRow => ({ ...row(index, email, purposes('granted', 'granted')), idempotencyKey: key, fingerprint });
    const first = await batch.record(applicationId, flow, [keyed(0, 'keyed@example.com', 'key-1', 'body-a')]);
    const firstRecord = first.made.get(0)!.recordId;
    const rows = [
      keyed(0, 'keyed@example.com', 'key-1', 'body-a'), // a replay
      keyed(1, 'refused-new@example.com', 'key-1', 'body-b'), // the key used before with another body
      keyed(2, 'keyed-new@example.com', 'key-2', 'body-c'), // new
      keyed(3, 'repeat-new@example.com', 'key-2', 'body-x'), // repeats row 2's key with another body
      keyed(4, 'keyed-new@example.com', 'key-3', 'body-d'),
    ];

    asked.length = 0;
    const found = await batch.knownAndClaimed(applicationId, rows);
    expect(found.known.map((person) => person.email)).toEqual(['keyed@example.com']);
    expect([...found.earlier!.entries()]).toEqual([['key-1', { idempotency_key: 'key-1', record_id: firstRecord, request_fingerprint: 'body-a' }]]);
    // Only the person of the rows that will be written is claimed: the requests refused for their
    // key leave no directory entry of their people.
    expect([...found.claimed.keys()]).toEqual(['keyed-new@example.com']);
    expect(asked).toEqual([RESIDENCY_CLAIM_NEW]);
    expect([directory.has('email:refused-new@example.com'), directory.has('email:repeat-new@example.com'), directory.get('email:keyed-new@example.com')]).toEqual([false, false, 'US']);
    // What the lookup answered is what record goes by (it does not read the keys again): a key
    // answered as used is a repeat, whatever the table holds.
    found.earlier!.set('key-3', { idempotency_key: 'key-3', record_id: 'rec_as_looked_up', request_fingerprint: 'body-d' });
    asked.length = 0;
    const again = await batch.record(applicationId, flow, rows, found.known, found);
    // A key used before answers its record, replayed (nothing new written); a new row is recorded.
    expect(again.outcomes).toEqual([
      { index: 0, outcome: 'recorded', record_id: firstRecord, replayed: true },
      { index: 1, outcome: 'refused', reasons: [{ field: 'idempotency_key', reason: 'already used with a different body' }] },
      { index: 2, outcome: 'recorded', record_id: again.made.get(2)!.recordId },
      { index: 3, outcome: 'refused', reasons: [{ field: 'idempotency_key', reason: 'already used with a different body' }] },
      { index: 4, outcome: 'recorded', record_id: 'rec_as_looked_up', replayed: true },
    ]);
    expect([...again.created]).toEqual([2]);
    expect(again.made.get(2)!.subjectId).toBe(found.claimed.get('keyed-new@example.com'));
    expect(asked).toEqual([]); // nobody left to register
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."consent_records" WHERE "idempotency_key" = 'key-1'`, [])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = ANY($1)`, [['refused-new@example.com', 'repeat-new@example.com']])).toBe(0);

    // Without keys the lookup and the claim go at once, and every person not recorded here is claimed.
    asked.length = 0;
    const unkeyed = await batch.knownAndClaimed(applicationId, [{ email: 'keyed@example.com' }, { email: 'unkeyed-new@example.com' }]);
    expect([unkeyed.known.map((person) => person.email), [...unkeyed.claimed.keys()], unkeyed.earlier, asked]).toEqual([
      ['keyed@example.com'],
      ['unkeyed-new@example.com'],
      undefined,
      [RESIDENCY_CLAIM_NEW],
    ]);
  });

  it('writes a new person whose later row withdraws an earlier row of the same batch', async () => {
    const email = 'changed-mind@example.com';
    const result = await batch.record(applicationId, flow, [row(0, email, purposes('granted', 'granted')), row(1, email, purposes('granted', 'declined'))]);

    expect(result.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded']);
    const first = result.made.get(0)!;
    expect(result.made.get(1)).toMatchObject({ subjectId: first.subjectId, supersedes: first.recordId });
    const [withdrawn] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [first.recordId]);
    expect(withdrawn.withdrawals).toEqual([expect.objectContaining({ purpose: 'analytics', channel: 'newer_record' })]);
    const events = await dataSource.query(`SELECT "type" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1 ORDER BY "type"`, [first.recordId]);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['consent.granted', 'consent.purpose_revoked']);
  });
  it('announces a later row\'s objection to a legitimate interest an earlier row let stand, on the earlier record, with nothing withdrawn', async () => {
    const email = 'objects-later@example.com';
    const withFraud = (fraud: RecordedPurpose['status']): Record<string, RecordedPurpose> => ({ ...purposes('granted', 'declined'), fraud: { status: fraud, basis: 'legitimate_interest' } });
    const result = await batch.record(applicationId, flow, [row(0, email, withFraud('noticed')), row(1, email, withFraud('objected'))]);

    expect(result.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded']);
    const first = result.made.get(0)!;
    // No withdrawal mark: nothing granted was withdrawn, and consent_status reads the objection from the newer record.
    const [stored] = await dataSource.query(`SELECT "withdrawals" FROM "decisions"."consent_records" WHERE "record_id" = $1`, [first.recordId]);
    expect(stored.withdrawals).toEqual([]);
    const events = await dataSource.query(`SELECT "type", "data" FROM "decisions"."outbox" WHERE "data"->>'record_id' = $1 ORDER BY "type"`, [first.recordId]);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['consent.granted', 'consent.purpose_revoked']);
    expect(events[1].data).toMatchObject({
      purposes: { newsletter: 'granted', analytics: 'declined', fraud: 'objected' },
      withdrawn: [],
      objected: ['fraud'],
      channel: 'newer_record',
      superseded_by: result.made.get(1)!.recordId,
    });
  });

  it('writes a batch against a remembered flow version only while it is still active, its new people under the ids the directory homed them with', async () => {
    const remembered = { id: 'flw_us_remembered', version: 1 };
    const version = (n: number, status: string) =>
      dataSource.query(
        `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
         VALUES ($1, $2, $3, $4, '{"pattern": "consent"}', 'fp', 'US', 1, now(), now())`,
        [remembered.id, n, applicationId, status],
      );
    await version(1, 'active');
    const kept = await batch.record(applicationId, remembered, [row(0, 'kept@example.com', purposes('granted', 'granted'))]);
    const keptId = kept.made.get(0)!.subjectId;
    const records = async (email: string) =>
      count(`SELECT count(*)::int AS n FROM "decisions"."consent_records" r JOIN "decisions"."subjects" s ON s."id" = r."subject_id" WHERE s."email" = $1`, [email]);

    // The people looked up and claimed at once: the person recorded before is found, not claimed.
    const people = await batch.knownAndClaimed(applicationId, [{ email: 'kept@example.com' }, { email: 'claimed@example.com' }]);
    expect(people.known.map((person) => [person.id, person.email])).toEqual([[keptId, 'kept@example.com']]);
    expect([...people.claimed.keys()]).toEqual(['claimed@example.com']);
    asked.length = 0;
    const written = await batch.record(
      applicationId,
      remembered,
      [row(0, 'kept@example.com', purposes('granted', 'declined')), row(1, 'claimed@example.com', purposes('granted', 'granted'))],
      people.known,
      { ...people, whileActive: true },
    );
    expect(written.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded']);
    expect(written.made.get(0)).toMatchObject({ subjectId: keptId, supersedes: kept.made.get(0)!.recordId });
    expect(written.made.get(1)!.subjectId).toBe(people.claimed.get('claimed@example.com'));
    expect(asked).toEqual([]); // nobody left to register
    // All new and claimed: the one statement, under the same condition.
    const alone = await batch.knownAndClaimed(applicationId, [{ email: 'also-claimed@example.com' }]);
    const single = await batch.record(applicationId, remembered, [row(0, 'also-claimed@example.com', purposes('granted', 'granted'))], alone.known, { ...alone, whileActive: true });
    expect(single.made.get(0)!.subjectId).toBe(alone.claimed.get('also-claimed@example.com'));

    // Another version activated meanwhile (behind this service's back): nothing of either kind of batch is written.
    await dataSource.query(`UPDATE "decisions"."flow_versions" SET "status" = 'superseded' WHERE "id" = $1`, [remembered.id]);
    await version(2, 'active');
    const late = await batch.knownAndClaimed(applicationId, [{ email: 'late@example.com' }]);
    await expect(batch.record(applicationId, remembered, [row(0, 'late@example.com', purposes('granted', 'granted'))], late.known, { ...late, whileActive: true })).rejects.toBeInstanceOf(
      StaleFlowVersion,
    );
    const mixed = await batch.knownAndClaimed(applicationId, [{ email: 'kept@example.com' }, { email: 'late-too@example.com' }]);
    await expect(
      batch.record(
        applicationId,
        remembered,
        [row(0, 'kept@example.com', purposes('declined', 'declined')), row(1, 'late-too@example.com', purposes('granted', 'granted'))],
        mixed.known,
        { ...mixed, whileActive: true },
      ),
    ).rejects.toBeInstanceOf(StaleFlowVersion);
    expect([await records('kept@example.com'), await records('late@example.com'), await records('late-too@example.com')]).toEqual([2, 0, 0]);
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = ANY($1)`, [['late@example.com', 'late-too@example.com']])).toBe(0);
    // The version read now writes as before.
    const current = await batch.record(applicationId, { id: remembered.id, version: 2 }, [row(0, 'late@example.com', purposes('granted', 'granted'))], late.known, { ...late, whileActive: true });
    expect(current.made.get(0)!.subjectId).toBe(late.claimed.get('late@example.com'));
  });

  it('claims first when asked, looks up only the people the directory did not home (or, looking up first, claims only whom it does not find), and keeps the one id of a person whose entry was lost', async () => {
    const kept = await batch.record(applicationId, flow, [row(0, 'claim-first-kept@example.com', purposes('granted', 'granted'))]);
    const keptId = kept.made.get(0)!.subjectId;
    const lookup = jest.spyOn(RECORD_BATCH_STATEMENTS.knownPeopleByEmail, 'rows');
    try {
      // Everyone new: the directory homes them all, and nobody is looked up.
      const fresh = await batch.knownAndClaimed(applicationId, [{ email: 'claim-first-a@example.com' }, { email: 'claim-first-b@example.com' }], { claimFirst: true });
      expect(fresh.known).toEqual([]);
      expect([...fresh.claimed.keys()].sort()).toEqual(['claim-first-a@example.com', 'claim-first-b@example.com']);
      expect(lookup).not.toHaveBeenCalled();

      // Someone the directory knows: only they are looked up, after the claim.
      const mixed = await batch.knownAndClaimed(applicationId, [{ email: 'claim-first-kept@example.com' }, { email: 'claim-first-c@example.com' }], { claimFirst: true });
      expect(lookup).toHaveBeenCalledTimes(1);
      expect(lookup.mock.calls[0][1]).toEqual([applicationId, ['claim-first-kept@example.com']]);
      expect(mixed.known.map((person) => [person.id, person.email])).toEqual([[keptId, 'claim-first-kept@example.com']]);
      expect([...mixed.claimed.keys()]).toEqual(['claim-first-c@example.com']);
    } finally {
      lookup.mockRestore();
    }

    // Looking up first (the last batch was all returning people): the directory is asked only for
    // whom the lookup does not find, and not at all when it finds everyone.
    asked.length = 0;
    const returning = await batch.knownAndClaimed(applicationId, [{ email: 'claim-first-kept@example.com' }], { lookUpFirst: true });
    expect([returning.known.map((person) => person.id), returning.claimed.size, asked]).toEqual([[keptId], 0, []]);
    const withNew = await batch.knownAndClaimed(applicationId, [{ email: 'claim-first-kept@example.com' }, { email: 'claim-first-d@example.com' }], { lookUpFirst: true });
    expect([withNew.known.map((person) => person.id), [...withNew.claimed.keys()], asked]).toEqual([[keptId], ['claim-first-d@example.com'], [RESIDENCY_CLAIM_NEW]]);

    // A person recorded here whose directory entry was lost is claimed again under a new id; the
    // write of new people meets their row, and the batch keeps the id they have.
    directory.delete('email:claim-first-kept@example.com');
    const lost = await batch.knownAndClaimed(applicationId, [{ email: 'claim-first-kept@example.com' }], { claimFirst: true });
    expect(lost.known).toEqual([]);
    expect(lost.claimed.get('claim-first-kept@example.com')).not.toBe(keptId);
    const again = await batch.record(applicationId, flow, [row(0, 'claim-first-kept@example.com', purposes('granted', 'declined'))], lost.known, lost);
    expect(again.outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded']);
    expect(again.made.get(0)).toMatchObject({ subjectId: keptId, supersedes: kept.made.get(0)!.recordId });
    expect(await count(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = $1`, ['claim-first-kept@example.com'])).toBe(1);
  });
});

/**
 * The lookup of a batch's people already known, on a table PostgreSQL has not analysed yet (a new
 * deployment's first minute): it must reach the people by their e-mail addresses through the index,
 * not read every person of the application and filter them (the plan it chose for the earlier
 * `email = ANY(…) OR external_id = ANY(…)`, whose cost grew with the table).
 */
describe('ImportBatch: the lookup of known people', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'known_people_plan');
    await database.dataSource.query(`ALTER TABLE "decisions"."subjects" SET (autovacuum_enabled = false)`);
    await database.dataSource.query(
      `INSERT INTO "decisions"."subjects" ("id", "application_id", "email", "created_at")
       SELECT 'sub_' || i, 'tp_us_many', 'person-' || i || '@example.com', now() FROM generate_series(1, 5000) AS i`,
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  it('looks each address up through the index, whatever the table\'s size', async () => {
    const emails = Array.from({ length: 30 }, (_, i) => `person-${1000 + i}@example.com`);
    const [{ 'QUERY PLAN': [plan] }] = await database.dataSource.query(`EXPLAIN (FORMAT JSON) ${RECORD_BATCH_STATEMENTS.knownPeople.text}`, ['tp_us_many', emails, []]);
    const scans: Array<Record<string, string>> = [];
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'subjects' || String(node['Node Type']).includes('Index Scan')) scans.push(node as Record<string, string>);
      for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) walk(child);
    };
    walk(plan.Plan);
    // One index scan by e-mail address and one by external id, each taking both of its columns.
    expect(scans.map((node) => [node['Node Type'], node['Index Name'], node['Index Cond']])).toEqual([
      ['Index Scan', 'UQ_subjects_application_email', "((application_id = 'tp_us_many'::text) AND (email = k.email))"],
      ['Index Scan', 'UQ_subjects_application_external_id', "((application_id = 'tp_us_many'::text) AND (external_id = k_1.external_id))"],
    ]);
    const found = await RECORD_BATCH_STATEMENTS.knownPeople.rows(database.dataSource, ['tp_us_many', [...emails, 'nobody@example.com'], []]);
    expect(found.map((person) => person.email).sort()).toEqual([...emails].sort());
  });
});

/** A migrated database holding `count` records of one application (`tp_us_many`) and flow (`flw_one`), a person each. */
async function databaseWithRecords(name: string, count: number): Promise<MigratedServiceDatabase> {
  const database = await migratedServiceDatabase(decisionsService, name);
  await database.dataSource.query(
    `INSERT INTO "decisions"."consent_records" ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at", "withdrawals")
     SELECT 'rec_' || i, 'tp_us_many', 'flw_one', 1, 'sub_' || i, '{}', 'granted', 'imported', now(), now(), '[]' FROM generate_series(1, $1::int) AS i`,
    [count],
  );
  return database;
}

/**
 * The withdrawal marks a batch adds to the records it supersedes: on a table of some thousands of
 * records (analysed), the records must be reached by primary key, not by a hash join over the
 * whole table (the plan PostgreSQL chose for the document joined alone, estimated at 100 rows,
 * until the table held about 25,000 records).
 */
describe('ImportBatch: the withdrawal of superseded records', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await databaseWithRecords('withdraw_plan', 15000);
    await database.dataSource.query(`ANALYZE "decisions"."consent_records"`);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('reaches the superseded records by primary key and marks each with its own withdrawals', async () => {
    const document = JSON.stringify([
      { id: 'rec_17', marks: [{ at: '2026-11-25T10:00:00.000Z', channel: 'newer_record' }] },
      { id: 'rec_14000', marks: [{ purpose: 'newsletter', at: '2026-11-25T10:00:00.000Z', channel: 'newer_record' }] },
    ]);
    const [{ 'QUERY PLAN': [plan] }] = await database.dataSource.query(`EXPLAIN (FORMAT JSON) ${RECORD_BATCH_WITHDRAW_SQL}`, [document]);
    const reads: string[] = [];
    const indexes: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'consent_records' && node['Node Type'] !== 'ModifyTable') reads.push(String(node['Node Type']));
      if (node['Index Name']) indexes.push(String(node['Index Name']));
      for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) walk(child);
    };
    walk(plan.Plan);
    // Read once, through the primary key (an index scan, or a bitmap over it): never a sequential scan.
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatch(/^(Index Scan|Bitmap Heap Scan)$/);
    expect(indexes).toEqual(['PK_consent_records']);
    await database.dataSource.query(RECORD_BATCH_WITHDRAW_SQL, [document]);
    const rows = await database.dataSource.query(`SELECT "record_id", "withdrawals" FROM "decisions"."consent_records" WHERE "withdrawals" <> '[]' ORDER BY "record_id"`);
    expect(rows).toEqual([
      { record_id: 'rec_14000', withdrawals: [{ purpose: 'newsletter', at: '2026-11-25T10:00:00.000Z', channel: 'newer_record' }] },
      { record_id: 'rec_17', withdrawals: [{ at: '2026-11-25T10:00:00.000Z', channel: 'newer_record' }] },
    ]);
  });
});

/**
 * A batch of new people supersedes nothing, so its statement has no record to read. When it read
 * the records it supersedes from the table (for their `recorded_at`), the plan PostgreSQL kept for
 * it, made while the table was a few rows, scanned every record for every batch: the first minutes
 * of a deployment, and every benchmark run (docs/performance.md, thirty-third session).
 */
describe('ImportBatch: the insert of a batch of new people', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await databaseWithRecords('new_people_plan', 3);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('reads no record, in the plan PostgreSQL keeps for it while the table is small', async () => {
    const statements = recordBatchNewPeopleInserts(database.dataSource);
    expect(statements).toHaveLength(2);
    const runner = database.dataSource.createQueryRunner();
    try {
      await runner.query(`SET plan_cache_mode = force_generic_plan`);
      for (const statement of statements) {
        await runner.query(`PREPARE probe(text, text, int, timestamptz, jsonb, jsonb, jsonb) AS ${statement.text}`);
        const [{ 'QUERY PLAN': [plan] }] = await runner.query(`EXPLAIN (FORMAT JSON) EXECUTE probe('tp_us_many', 'flw_one', 1, now(), '[]', '[]', '[]')`);
        await runner.query(`DEALLOCATE probe`);
        const reads: string[] = [];
        const inserts: string[] = [];
        const walk = (node: Record<string, unknown>) => {
          if (node['Relation Name'] === 'consent_records') (node['Node Type'] === 'ModifyTable' ? inserts : reads).push(String(node['Node Type']));
          for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) walk(child);
        };
        walk(plan.Plan);
        expect({ statement: statement.name, inserts, reads }).toEqual({ statement: statement.name, inserts: ['ModifyTable'], reads: [] });
      }
    } finally {
      await runner.release();
    }
  });
});

describe('The migration that makes record chains linear', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'record_chain_migration');
  });

  afterAll(async () => {
    await database?.close();
  });

  it('stops, naming them, when earlier versions left a record superseded twice, and adds the index once they are reconciled', async () => {
    const { dataSource } = database;
    const migration = new ConsentRecordChainsAreLinear1765500000000();
    const runner = dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      const record = (id: string, supersedes: string | null) =>
        dataSource.query(
          `INSERT INTO "decisions"."consent_records" ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at", "supersedes", "withdrawals")
           VALUES ($1, 'tp_us_forked', 'flw_us_forked', 1, 'sub_usforked', '{}', 'granted', 'imported', now(), now(), $2, '[]')`,
          [id, supersedes],
        );
      await record('rec_us_fork_base', null);
      await record('rec_us_fork_a', 'rec_us_fork_base');
      await record('rec_us_fork_b', 'rec_us_fork_base');
      await expect(migration.up(runner)).rejects.toThrow(/rec_us_fork_base superseded by rec_us_fork_a and rec_us_fork_b/);
      // Reconciled as deploy/README.md tells the operator (which quotes this very statement): both
      // successors kept, the later one now superseding the earlier.
      const readme = readFileSync(join(__dirname, '../../../deploy/README.md'), 'utf8');
      expect(readme.replace(/\s+/g, ' ')).toContain(RECONCILE_FORKED_CHAINS_SQL.replace(/\s+/g, ' '));
      await dataSource.query(RECONCILE_FORKED_CHAINS_SQL);
      expect(
        (await dataSource.query(`SELECT "record_id", "supersedes" FROM "decisions"."consent_records" WHERE "application_id" = 'tp_us_forked' ORDER BY "recorded_at", "record_id"`)),
      ).toEqual([
        { record_id: 'rec_us_fork_base', supersedes: null },
        { record_id: 'rec_us_fork_a', supersedes: 'rec_us_fork_base' },
        { record_id: 'rec_us_fork_b', supersedes: 'rec_us_fork_a' },
      ]);
      await migration.up(runner);
      await expect(record('rec_us_fork_c', 'rec_us_fork_base')).rejects.toMatchObject({ code: '23505' });
    } finally {
      await runner.release();
    }
  });
});
