import 'reflect-metadata';
import { createServiceDataSource, migrateServiceSchema } from '@dcr/persistence';
import { createTestDatabase, TestDatabase } from '@dcr/testing';
import { DataSource } from 'typeorm';
import { decisionsService } from '../src/decisions.service';
import { DecisionSession } from '../src/sessions/decision-session.entity';
import { SessionsRepository } from '../src/sessions/sessions.repository';
import { SignInCode } from '../src/sessions/sign-in-code.entity';

/**
 * Consent token verification against the real PostgreSQL: many checks at once go to the database in
 * batches (CallBatcher, one UPDATE for the checks that arrived meanwhile), and a batch must keep
 * every rule of a single check: single use, the caller's application, the right token, not expired.
 */
describe('SessionsRepository: verifying consent tokens in batches', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let repository: SessionsRepository;

  beforeAll(async () => {
    database = await createTestDatabase('verifications');
    dataSource = createServiceDataSource({
      url: database.url,
      schema: decisionsService.schema,
      entities: decisionsService.entities,
      migrations: decisionsService.migrations,
      poolSize: 2,
    });
    await dataSource.initialize();
    await migrateServiceSchema(dataSource);
    repository = new SessionsRepository(dataSource.getRepository(DecisionSession), dataSource.getRepository(SignInCode));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
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
         ("token", "id", "application_id", "kind", "path", "status", "outcome", "created_via", "delivery_mode", "locale",
          "expires_at", "created_at", "updated_at", "consent_token_hash", "consent_token_expires_at")
       VALUES ($1, $2, $3, 'consent', 'informed', $4, $5, 'decisions', 'embed', 'en',
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
});
