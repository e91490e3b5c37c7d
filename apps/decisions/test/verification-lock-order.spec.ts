import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';
import { DecisionSession } from '../src/sessions/decision-session.entity';
import { SessionsRepository } from '../src/sessions/sessions.repository';
import { SignInCode } from '../src/sessions/sign-in-code.entity';

/**
 * Consent token checks go to the database in batches (one UPDATE of the sessions checked), on every
 * replica. The same tokens checked on two replicas at once (a client checking again, in parallel,
 * what it checked a moment before) put the same sessions in two batches, in different orders; the
 * batches must wait for each other, not deadlock (the batch PostgreSQL picked as the victim failed
 * every check in it, also those of other callers), and each token is still used once.
 */
describe('SessionsRepository: two replicas checking the same consent tokens at once', () => {
  let database: MigratedServiceDatabase;
  let replicas: SessionsRepository[];

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'verification_order', 8);
    const { dataSource } = database;
    replicas = [0, 1].map(() => new SessionsRepository(dataSource.getRepository(DecisionSession), dataSource.getRepository(SignInCode)));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('answers every check of tokens checked on both replicas in opposite orders, each token consumed once', async () => {
    for (let round = 0; round < 6; round++) {
      const sessions = Array.from({ length: 300 }, (_, i) => ({ token: `dts_order_${round}_${i}`, hash: `hash-${round}-${i}`, applicationId: 'tp_us_app_one' }));
      await database.dataSource.query(
        `INSERT INTO "decisions"."decision_sessions"
           ("token_hash", "id", "application_id", "kind", "path", "status", "outcome", "created_via", "delivery_mode", "locale",
            "expires_at", "created_at", "updated_at", "consent_token_hash", "consent_token_expires_at")
         SELECT encode(sha256(convert_to(t, 'UTF8')), 'hex'), 'dcs_' || t, 'tp_us_app_one', 'consent', 'informed', 'fulfilled', 'granted', 'decisions', 'embed', 'en',
            now() + interval '1 day', now(), now(), h, now() + interval '5 minutes'
           FROM unnest($1::text[], $2::text[]) AS s(t, h)`,
        [sessions.map((session) => session.token), sessions.map((session) => session.hash)],
      );
      const check = (replica: SessionsRepository, list: typeof sessions) =>
        list.map((session) => replica.consumeConsentTokenStatus(session.token, session.applicationId, session.hash));
      const outcomes = await Promise.allSettled([...check(replicas[0], sessions), ...check(replicas[1], [...sessions].reverse())]);
      const failures = [...new Set(outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : [])))];
      expect([round, failures]).toEqual([round, []]);
      // Each token answered once (to one replica's check), the other check finding it used.
      const answered = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value !== null).length;
      expect([round, answered]).toEqual([round, sessions.length]);
    }
  });
});
