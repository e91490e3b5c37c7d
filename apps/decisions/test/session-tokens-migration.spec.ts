import 'reflect-metadata';
import { hashCredential, sealForBearer } from '@dcr/domain';
import { ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { DataSource } from 'typeorm';
import { decisionsService } from '../src/decisions.service';
import { INBOX_ADDRESS, InboxService } from '../src/inbox/inbox.service';
import { InboxSession } from '../src/inbox/inbox-session.entity';
import { MailTransport } from '../src/mail/mail-transport';
import { SessionTokensKeptAsHashes1766300000000 } from '../src/migrations/1766300000000-session-tokens-kept-as-hashes';
import { DecisionSession } from '../src/sessions/decision-session.entity';
import { SessionTokens } from '../src/sessions/session-tokens';
import { SessionsRepository } from '../src/sessions/sessions.repository';
import { SignInCode } from '../src/sessions/sign-in-code.entity';

/**
 * Session tokens kept only as hashes (SessionTokensKeptAsHashes1766300000000), against the real
 * PostgreSQL: the sessions open before it (random tokens, in plain text) are converted, their old
 * links still open them, their sign-in codes follow them, and the inbox lists only the sessions whose
 * token it can derive again.
 */
describe('SessionTokensKeptAsHashes: session tokens stored only as hashes', () => {
  const person = 'migrated@example.com';
  const oldToken = 'dts_usa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5';
  const doneToken = 'dts_usz9y8x7w6v5u4t3s2r1q0p9o8n7m6l5';
  const context = { env: { COUNTRY: 'US', SUBJECT_REF_KEY: 'k'.repeat(32) } } as unknown as ServiceContext;
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'session_tokens');
    dataSource = database.dataSource;
  });

  afterAll(async () => {
    await database?.close();
  });

  /** A session row as the schema before the migration kept it: the token in plain text, as the primary key. */
  const oldSession = (token: string, id: string, status: string) =>
    dataSource.query(
      `INSERT INTO "decisions"."decision_sessions" ("token", "id", "application_id", "kind", "path", "status", "created_via", "delivery_mode", "locale",
         "subject_email", "expires_at", "created_at", "updated_at")
       VALUES ($1, $2, 'tp_us_app_one', 'approval', 'standard', $3, 'decisions', 'embed', 'en', $4, now() + interval '1 day', now(), now())`,
      [token, id, status, person],
    );
  const oldCode = (id: string, sessionToken: string) =>
    dataSource.query(
      `INSERT INTO "decisions"."sign_in_codes" ("id", "session_token", "email_digest", "code_hash", "expires_at", "created_at")
       VALUES ($1, $2, 'digest', 'hash', now() + interval '10 minutes', now())`,
      [id, sessionToken],
    );
  const columns = async (table: string) =>
    (await dataSource.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'decisions' AND table_name = $1`, [table])).map(
      (row: { column_name: string }) => row.column_name,
    );

  it('converts the sessions open before it, which their old links still open, and lists in the inbox only those it can link', async () => {
    const migration = new SessionTokensKeptAsHashes1766300000000();
    const runner = dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      await oldSession(oldToken, 'dcs_old_pending', 'pending');
      await oldSession(doneToken, 'dcs_old_done', 'fulfilled');
      await oldCode('otp_old_session', oldToken);
      await oldCode('otp_old_inbox', 'inbox');
      await oldCode('otp_orphan', 'dts_usnosuchsession0000000000000000');
      await migration.up(runner);
    } finally {
      await runner.release();
    }

    // No token in plain text is left: the columns that held it are gone, and the hash SQL computed is hashCredential's.
    expect(await columns('decision_sessions')).not.toContain('token');
    expect(await columns('sign_in_codes')).not.toContain('session_token');
    expect(await dataSource.query(`SELECT "id", "token_hash", "token_nonce" FROM "decisions"."decision_sessions" ORDER BY "id"`)).toEqual([
      { id: 'dcs_old_done', token_hash: hashCredential(doneToken), token_nonce: null },
      { id: 'dcs_old_pending', token_hash: hashCredential(oldToken), token_nonce: null },
    ]);
    // The codes name their session by id; a code of no session is dropped.
    expect(await dataSource.query(`SELECT "id", "session_id" FROM "decisions"."sign_in_codes" ORDER BY "id"`)).toEqual([
      { id: 'otp_old_inbox', session_id: 'inbox' },
      { id: 'otp_old_session', session_id: 'dcs_old_pending' },
    ]);

    // The old link still opens its session (every participant step finds and locks it so).
    const sessions = new SessionsRepository(dataSource.getRepository(DecisionSession), dataSource.getRepository(SignInCode));
    expect(await sessions.find(oldToken)).toMatchObject({ id: 'dcs_old_pending', status: 'pending' });
    await dataSource.transaction(async (manager) => expect(await sessions.lock(manager, oldToken)).toMatchObject({ id: 'dcs_old_pending' }));
    expect(await sessions.latestCode(dataSource.manager, 'dcs_old_pending')).toMatchObject({ id: 'otp_old_session' });

    // A session opened since keeps the nonce its token is derived from; the inbox links it, and leaves the old one out.
    const tokens = new SessionTokens(context);
    const issued = tokens.issue();
    await dataSource.query(
      `INSERT INTO "decisions"."decision_sessions" ("id", "token_hash", "token_nonce", "application_id", "kind", "path", "status", "created_via", "delivery_mode", "locale",
         "subject_email", "expires_at", "created_at", "updated_at")
       VALUES ('dcs_new', $1, $2, 'tp_us_app_one', 'approval', 'standard', 'pending', 'decisions', 'embed', 'en', $3, now() + interval '1 day', now(), now())`,
      [issued.tokenHash, issued.tokenNonce, person],
    );
    expect(await sessions.find(issued.token)).toMatchObject({ id: 'dcs_new' });
    const inboxToken = 'inb_migration_test';
    await dataSource.getRepository(InboxSession).insert({
      id: 'inbs_migration',
      tokenHash: hashCredential(inboxToken),
      emailSealed: sealForBearer(inboxToken, INBOX_ADDRESS, person),
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + 3600_000),
    });
    const inbox = new InboxService(dataSource, dataSource.getRepository(SignInCode), dataSource.getRepository(InboxSession), {} as MailTransport, tokens, context);
    const page = await inbox.list({ inbox_token: inboxToken, limit: 50, sort: 'deadline' });
    expect(page.data.map((item) => item.session_token)).toEqual([issued.token]);

    // There is no way back to the tokens: reverting refuses while sessions exist.
    const back = dataSource.createQueryRunner();
    try {
      await expect(migration.down(back)).rejects.toThrow(/cannot be restored/);
    } finally {
      await back.release();
    }
  });
});
