import 'reflect-metadata';
import { hashCredential } from '@dcr/domain';
import { OutboxEvent, outboxRow } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { DataSource } from 'typeorm';
import { decisionsService } from '../src/decisions.service';
import { FlowVersion } from '../src/flows/flow-version.entity';
import { FlowsRepository, StaleFlowVersion } from '../src/flows/flows.repository';
import { DecisionSession } from '../src/sessions/decision-session.entity';
import { SessionsRepository } from '../src/sessions/sessions.repository';
import { SignInCode } from '../src/sessions/sign-in-code.entity';

/**
 * The repository's batched statements against the real PostgreSQL. Many consent token checks at
 * once go to the database in batches (CallBatcher, one UPDATE for the checks that arrived
 * meanwhile), and a batch must keep every rule of a single check: single use, the caller's
 * application, the right token, not expired. New sessions are inserted in batches too, with the
 * same columns as one alone, and a row the database refuses fails its own call only. A session's
 * moves lock and save it with prepared statements instead of TypeORM's query builder and save.
 */
describe('SessionsRepository and FlowsRepository: the hot paths\' statements', () => {
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let repository: SessionsRepository;
  let flows: FlowsRepository;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'verifications');
    dataSource = database.dataSource;
    repository = new SessionsRepository(dataSource.getRepository(DecisionSession), dataSource.getRepository(SignInCode));
    flows = new FlowsRepository(dataSource.getRepository(FlowVersion));
  });

  afterAll(async () => {
    await database?.close();
  });

  let sequence = 0;
  /** A completed session whose consent token (stored as `hash-<n>`) is unused; its token, hash and application. */
  async function completedSession(options: { applicationId?: string; status?: string; outcome?: string; tokenAgeMinutes?: number } = {}) {
    const n = ++sequence;
    const token = `dts_test_${n}`;
    const hash = `hash-${n}`;
    const applicationId = options.applicationId ?? 'tp_us_app_one';
    await dataSource.query(
      `INSERT INTO "decisions"."decision_sessions"
         ("token_hash", "id", "application_id", "kind", "path", "status", "outcome", "created_via", "delivery_mode", "locale",
          "expires_at", "created_at", "updated_at", "consent_token_hash", "consent_token_expires_at")
       VALUES (encode(sha256(convert_to($1, 'UTF8')), 'hex'), $2, $3, 'consent', 'informed', $4, $5, 'decisions', 'embed', 'en',
          now() + interval '1 day', now(), now(), $6, now() + make_interval(mins => 5 - $7::int))`,
      [token, `dcs_test_${n}`, applicationId, options.status ?? 'fulfilled', options.outcome ?? 'granted', hash, options.tokenAgeMinutes ?? 0],
    );
    return { token, hash, applicationId };
  }

  it('answers each of many concurrent checks as a single check would', async () => {
    const valid = await Promise.all(Array.from({ length: 30 }, () => completedSession()));
    const denied = await completedSession({ status: 'denied', outcome: 'denied' });
    const otherApplication = await completedSession({ applicationId: 'tp_us_app_two' });
    const old = await completedSession({ tokenAgeMinutes: 6 });

    const checks = [
      ...valid.map((session) => repository.consumeConsentTokenStatus(session.token, session.applicationId, session.hash)),
      repository.consumeConsentTokenStatus(denied.token, denied.applicationId, denied.hash),
      // Another application's caller, the wrong token, an expired one: none of them consumes anything.
      repository.consumeConsentTokenStatus(otherApplication.token, 'tp_us_app_one', otherApplication.hash),
      repository.consumeConsentTokenStatus(valid[0].token, valid[0].applicationId, 'hash-of-something-else'),
      repository.consumeConsentTokenStatus(old.token, old.applicationId, old.hash),
      repository.consumeConsentTokenStatus('dts_unknown', 'tp_us_app_one', 'hash-unknown'),
    ];
    const answers = await Promise.all(checks);

    expect(answers.slice(0, 30)).toEqual(valid.map(() => ({ status: 'fulfilled', outcome: 'granted' })));
    expect(answers[30]).toEqual({ status: 'denied', outcome: 'denied' });
    expect(answers.slice(31)).toEqual([null, null, null, null]);

    // The other application's token is still unused: its own application consumes it.
    await expect(repository.consumeConsentTokenStatus(otherApplication.token, otherApplication.applicationId, otherApplication.hash)).resolves.toEqual({
      status: 'fulfilled',
      outcome: 'granted',
    });
    const consumed = await dataSource.query(`SELECT count(*)::int AS n FROM "decisions"."decision_sessions" WHERE "consent_token_consumed_at" IS NOT NULL`);
    expect(consumed[0].n).toBe(32);
  });

  it('lets exactly one of many concurrent checks of one token win, within a batch and across batches', async () => {
    const sessions = await Promise.all(Array.from({ length: 5 }, () => completedSession()));
    // Twelve checks of each token, interleaved, so that batches hold several checks of one token.
    const checks = Array.from({ length: 12 }, () => sessions).flat();
    const answers = await Promise.all(checks.map((session) => repository.consumeConsentTokenStatus(session.token, session.applicationId, session.hash)));

    for (const session of sessions) {
      const wins = answers.filter((answer, index) => checks[index] === session && answer !== null);
      expect(wins).toEqual([{ status: 'fulfilled', outcome: 'granted' }]);
    }
    // A replay afterwards finds the token used.
    await expect(repository.consumeConsentTokenStatus(sessions[0].token, sessions[0].applicationId, sessions[0].hash)).resolves.toBeNull();
  });

  /** A new session as CreateDecision builds it, with its creation event and its token (the row keeps its hash). */
  function newSession(n: string, overrides: Partial<DecisionSession> = {}) {
    const now = new Date('2026-11-23T10:00:00.123Z');
    const token = `dts_new_${n}`;
    const session = Object.assign(new DecisionSession(), {
      id: `dcs_new_${n}`,
      tokenHash: hashCredential(token),
      tokenNonce: `nonce-${n}`,
      applicationId: 'tp_us_app_one',
      kind: 'approval',
      path: 'standard',
      status: 'pending',
      createdVia: 'decisions',
      flowId: null,
      flowVersion: null,
      deliveryMode: 'embed',
      embedOrigin: 'https://shop.example',
      redirectUri: null,
      locale: 'de',
      subjectId: null,
      subjectEmail: `person-${n}@example.com`,
      subjectExternalId: null,
      signedInAt: null,
      participantProofHash: null,
      noticeShownAt: null,
      approval: { title: `Refund ${n}`, description: null, action: 'refund', value: { amount: 12.5, currency: 'EUR' }, trigger: 'agent', agent_id: null },
      deadlineAt: null,
      expiresAt: new Date(now.getTime() + 3600_000),
      outcome: null,
      purposeDecisions: null,
      purposeOutcomes: null,
      withdrawals: [],
      counter: null,
      completedAt: null,
      recordId: null,
      consentTokenHash: null,
      consentTokenExpiresAt: null,
      consentTokenConsumedAt: null,
      createdAt: now,
      updatedAt: now,
      ...overrides,
    });
    const event = outboxRow({ type: 'decision.created', applicationId: 'tp_us_app_one', data: { session_id: session.id, n }, occurredAt: now });
    return { session, event, token };
  }

  it('inserts concurrent new sessions with their events, each row as one inserted alone', async () => {
    const lone = newSession('lone');
    await repository.insertWithEvent(lone.session, lone.event);
    const many = Array.from({ length: 25 }, (_, i) => newSession(`many${i}`, { flowVersion: i, kind: i % 2 ? 'approval' : 'consent' }));
    await Promise.all(many.map(({ session, event }) => repository.insertWithEvent(session, event)));

    for (const { session, event, token } of [lone, ...many]) {
      const stored = await repository.find(token);
      expect(stored).toEqual(session);
      const storedEvent = await dataSource.getRepository(OutboxEvent).findOneByOrFail({ id: event.id });
      expect(storedEvent).toEqual(event);
    }
  });

  it('fails only the call whose row the database refuses when it shares a batch', async () => {
    const taken = newSession('taken');
    await repository.insertWithEvent(taken.session, taken.event);
    const batch = Array.from({ length: 6 }, (_, i) => newSession(`batch${i}`));
    // The fourth reuses a token that exists: its row breaks the token hash's unique index.
    batch[3] = newSession('dup', { tokenHash: taken.session.tokenHash });
    const outcomes = await Promise.allSettled(batch.map(({ session, event }) => repository.insertWithEvent(session, event)));

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((outcomes[3] as PromiseRejectedResult).reason as { driverError?: { code?: string } }).driverError?.code).toBe('23505');
    for (const [i, { session, token }] of batch.entries()) {
      if (i !== 3) expect(await repository.find(token)).toEqual(session);
    }
    // The refused row's event was not kept either.
    expect(await dataSource.getRepository(OutboxEvent).findOneBy({ id: batch[3].event.id })).toBeNull();
  });

  it('looks up the version new sessions use for many flows at once, each as one lookup alone would', async () => {
    const version = (id: string, n: number, status: string, pattern: string, locale: string) =>
      dataSource.query(
        `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
         VALUES ($1, $2, 'tp_us_app_one', $3, $4, 'fp', 'US', 1, now(), now())`,
        [id, n, status, JSON.stringify({ pattern, locale })],
      );
    await version('flw_active', 1, 'active', 'standard', 'en');
    await version('flw_newer', 1, 'superseded', 'standard', 'en');
    await version('flw_newer', 2, 'active', 'informed', 'de');
    await version('flw_newer', 3, 'draft', 'standard', 'fr');
    await version('flw_draft', 1, 'draft', 'informed', 'en');

    const expected = {
      flw_active: { applicationId: 'tp_us_app_one', version: 1, status: 'active', pattern: 'standard', locale: 'en' },
      flw_newer: { applicationId: 'tp_us_app_one', version: 2, status: 'active', pattern: 'informed', locale: 'de' },
      flw_draft: { applicationId: 'tp_us_app_one', version: 1, status: 'draft', pattern: 'informed', locale: 'en' },
      flw_unknown: null,
    };
    const ids = Array.from({ length: 6 }, () => Object.keys(expected)).flat();
    const found = await Promise.all(ids.map((id) => flows.current(id)));
    expect(found).toEqual(ids.map((id) => expected[id as keyof typeof expected]));
    // Alone, the same answers.
    for (const [id, answer] of Object.entries(expected)) expect(await flows.current(id)).toEqual(answer);
  });

  it('inserts a session only while the flow version it names is active, alone and in a batch', async () => {
    const version = (n: number, status: string) =>
      dataSource.query(
        `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
         VALUES ('flw_guarded', $1, 'tp_us_app_one', $2, '{"pattern":"standard","locale":"en"}', 'fp', 'US', 1, now(), now())`,
        [n, status],
      );
    await version(1, 'active');
    const onFirst = newSession('guard-first', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 1 });
    await repository.insertWithEvent(onFirst.session, onFirst.event);
    expect(await repository.find(onFirst.token)).toEqual(onFirst.session);

    // Version 2 is activated (here as another replica or the flow's home country would: in the database only).
    await dataSource.query(`UPDATE "decisions"."flow_versions" SET "status" = 'superseded' WHERE "id" = 'flw_guarded' AND "version" = 1`);
    await version(2, 'active');
    const stale = newSession('guard-stale', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 1 });
    await expect(repository.insertWithEvent(stale.session, stale.event)).rejects.toEqual(new StaleFlowVersion('flw_guarded'));

    // In one batch: sessions on the superseded version fail alone; the others are written with their events.
    const batch = [
      newSession('guard-b0', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 2 }),
      newSession('guard-b1', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 1 }),
      newSession('guard-b2'),
      newSession('guard-b3', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 1 }),
      newSession('guard-b4', { kind: 'consent', flowId: 'flw_guarded', flowVersion: 2 }),
      newSession('guard-b5', { kind: 'consent', flowId: 'flw_unknown', flowVersion: 1 }),
    ];
    const outcomes = await Promise.allSettled(batch.map(({ session, event }) => repository.insertWithEvent(session, event)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFlowVersion);
    expect((outcomes[5] as PromiseRejectedResult).reason).toEqual(new StaleFlowVersion('flw_unknown'));
    // An event that does not name its session would be dropped by the batch statement: refused before anything is written.
    const unnamed = newSession('guard-unnamed');
    await expect(repository.insertWithEvent(unnamed.session, { ...unnamed.event, data: { n: 'unnamed' } } as OutboxEvent)).rejects.toThrow(/data\.session_id/);
    expect(await repository.find(unnamed.token)).toBeNull();
    const events = dataSource.getRepository(OutboxEvent);
    for (const [i, { session, event, token }] of [...batch.entries(), [6, stale] as const]) {
      const written = i === 0 || i === 2 || i === 4;
      expect(await repository.find(token)).toEqual(written ? session : null);
      expect(await events.findOneBy({ id: event.id })).toEqual(written ? event : null);
    }
  });

  it('remembers a flow\'s active version for new sessions, and asks the database again when told to', async () => {
    await dataSource.query(
      `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
       VALUES ('flw_remembered', 1, 'tp_us_app_one', 'active', '{"pattern":"informed","locale":"de"}', 'fp', 'US', 1, now(), now()),
              ('flw_remembered_draft', 1, 'tp_us_app_one', 'draft', '{"pattern":"informed","locale":"de"}', 'fp', 'US', 1, now(), now())`,
    );
    const remembering = new FlowsRepository(dataSource.getRepository(FlowVersion));
    const first = { applicationId: 'tp_us_app_one', version: 1, status: 'active', pattern: 'informed', locale: 'de' };
    expect(await remembering.current('flw_remembered')).toEqual(first);
    expect(await remembering.current('flw_remembered_draft')).toMatchObject({ status: 'draft' });

    await dataSource.query(`UPDATE "decisions"."flow_versions" SET "status" = 'superseded' WHERE "id" = 'flw_remembered'`);
    await dataSource.query(
      `INSERT INTO "decisions"."flow_versions" ("id", "version", "application_id", "status", "terms", "terms_fingerprint", "authored_in", "revision", "created_at", "updated_at")
       VALUES ('flw_remembered', 2, 'tp_us_app_one', 'active', '{"pattern":"standard","locale":"en"}', 'fp', 'US', 1, now(), now())`,
    );
    await dataSource.query(`UPDATE "decisions"."flow_versions" SET "status" = 'active' WHERE "id" = 'flw_remembered_draft'`);
    // The active version is answered from memory (the insert's check is what catches it superseded);
    // a draft was not remembered, so its activation shows at once.
    expect(await remembering.current('flw_remembered')).toEqual(first);
    expect(await remembering.current('flw_remembered_draft')).toMatchObject({ status: 'active' });
    const second = { applicationId: 'tp_us_app_one', version: 2, status: 'active', pattern: 'standard', locale: 'en' };
    expect(await remembering.current('flw_remembered', { fresh: true })).toEqual(second);
    expect(await remembering.current('flw_remembered')).toEqual(second);
    // forget(): the next lookup asks the database.
    await dataSource.query(`UPDATE "decisions"."flow_versions" SET "terms" = '{"pattern":"informed","locale":"fr"}' WHERE "id" = 'flw_remembered' AND "version" = 2`);
    expect(await remembering.current('flw_remembered')).toEqual(second);
    remembering.forget('flw_remembered');
    expect(await remembering.current('flw_remembered')).toEqual({ ...second, pattern: 'informed', locale: 'fr' });
  });

  it('locks a session in a transaction and saves every change made to it', async () => {
    const { session, event, token } = newSession('saved');
    await repository.insertWithEvent(session, event);
    const later = new Date('2026-11-23T10:05:00.456Z');

    await dataSource.transaction(async (manager) => {
      const locked = await repository.lock(manager, token);
      expect(locked).toEqual(session);
      Object.assign(locked!, {
        status: 'fulfilled',
        outcome: 'approved',
        purposeDecisions: { newsletter: true },
        counter: null,
        completedAt: later,
        consentTokenHash: 'hash-saved',
        consentTokenExpiresAt: new Date(later.getTime() + 300_000),
        updatedAt: later,
      });
      await repository.save(manager, locked!);
    });

    const stored = await repository.find(token);
    expect(stored).toEqual({
      ...session,
      status: 'fulfilled',
      outcome: 'approved',
      purposeDecisions: { newsletter: true },
      completedAt: later,
      consentTokenHash: 'hash-saved',
      consentTokenExpiresAt: new Date(later.getTime() + 300_000),
      updatedAt: later,
    });
    await expect(dataSource.transaction((manager) => repository.lock(manager, 'dts_no_such_session'))).resolves.toBeNull();
    await expect(dataSource.transaction((manager) => repository.save(manager, Object.assign(new DecisionSession(), { ...session, id: 'dcs_gone' })))).rejects.toThrow(
      'was not found to save',
    );
  });

  it('holds a locked session until the transaction ends', async () => {
    const { event, session, token } = newSession('held');
    await repository.insertWithEvent(session, event);
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstLocked!: () => void;
    const lockedOnce = new Promise<void>((resolve) => (firstLocked = resolve));

    const first = dataSource.transaction(async (manager) => {
      await repository.lock(manager, token);
      order.push('first locked');
      firstLocked();
      await firstHolds;
      order.push('first done');
    });
    await lockedOnce;
    const second = dataSource.transaction(async (manager) => {
      await repository.lock(manager, token);
      order.push('second locked');
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first locked', 'first done', 'second locked']);
  });
});
