import { DataSource } from 'typeorm';
import { InProcessBus } from '@dcr/transport';
import { RetentionSweep } from '../../apps/decisions/src/retention/retention-sweep';
import { NEWSLETTER_FLOW } from '../support/fixtures';
import { applicationWithToken, http, randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * What the decisions service keeps only for a while (docs/architecture.md, Retention), on the tables
 * its own migrations made: sign-in codes a day after they were asked for, inbox sign-ins a day after
 * they expired, development mail after a week; anything younger stays.
 */
describe('the retention sweep of the decisions service', () => {
  let us: RunningCountry;
  let db: DataSource;
  const adminToken = randomSecret();

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken, country: 'US', peers: [] });
    db = await new DataSource({ type: 'postgres', url: us.database.url }).initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    await us?.close();
  });

  it('deletes what has served its time and keeps the rest', async () => {
    const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const code = (id: string, createdAt: Date) =>
      db.query(
        `INSERT INTO decisions.sign_in_codes (id, session_id, email, email_digest, code_hash, attempts, expires_at, consumed_at, created_at) VALUES ($1, 'dcs_test', NULL, 'digest', 'hash', 0, $2, NULL, $3)`,
        [id, new Date(createdAt.getTime() + 600_000), createdAt],
      );
    await code('otp_old', ago(25));
    await code('otp_fresh', ago(2));
    const inbox = (id: string, expiresAt: Date) =>
      db.query(`INSERT INTO decisions.inbox_sessions (id, token_hash, email_sealed, created_at, expires_at) VALUES ($1, $2, 'sealed', $3, $3)`, [id, `hash_${id}`, expiresAt]);
    await inbox('inb_old', ago(25));
    await inbox('inb_fresh', ago(1));
    const mail = (id: string, sentAt: Date) =>
      db.query(`INSERT INTO decisions.dev_mailbox (id, to_address, subject, text, html, sent_at) VALUES ($1, 'ada@example.com', 's', 't', 'h', $2)`, [id, sentAt]);
    await mail('mail_old', ago(8 * 24));
    await mail('mail_fresh', ago(6 * 24));

    expect(await new RetentionSweep(db).sweep()).toMatchObject({ 'sign-in codes': 1, 'inbox sign-ins': 1, 'development mail': 1 });
    const ids = async (table: string) => (await db.query(`SELECT id FROM decisions.${table} WHERE id LIKE '%_old' OR id LIKE '%_fresh' ORDER BY id`)).map((row: { id: string }) => row.id);
    expect([await ids('sign_in_codes'), await ids('inbox_sessions'), await ids('dev_mailbox')]).toEqual([['otp_fresh'], ['inb_fresh'], ['mail_fresh']]);
  });

  it("forgets the person of a session that ended without a decision 30 days after it ended, and keeps a decided one's", async () => {
    const { applicationId, apiToken } = await applicationWithToken(us, adminToken);
    const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
    const flowId = (await api('POST', `/api/v1/applications/${applicationId}/flows`, NEWSLETTER_FLOW)).body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    const session = async (email: string) => {
      const created = await api('POST', '/api/v1/decisions', { kind: 'consent', flow_id: flowId, subject: { email, external_id: `ext-${email}` } });
      expect(created.status).toBe(201);
      return { id: created.body.session_id as string, token: created.body.session_token as string };
    };
    // Cancelled by the person: ended without a decision.
    const cancelled = async (email: string) => {
      const { id, token } = await session(email);
      expect((await http(us.url, 'POST', `/api/v1/decisions/${token}/cancel`, { body: {} })).status).toBe(200);
      return id;
    };
    const old = await cancelled('ended.long.ago@example.com');
    const recent = await cancelled('ended.lately@example.com');
    // Standing in for a decided one (declined: it ends expired too, with its outcome).
    const { id: decided } = await session('decided.long.ago@example.com');
    await db.query(`UPDATE decisions.decision_sessions SET status = 'expired', outcome = 'declined' WHERE id = $1`, [decided]);
    const ago = (days: number, id: string) => db.query(`UPDATE decisions.decision_sessions SET updated_at = now() - make_interval(days => $1) WHERE id = $2`, [days, id]);
    await ago(31, old);
    await ago(29, recent);
    await ago(31, decided);

    expect((await new RetentionSweep(db).sweep())['people of sessions ended without a decision']).toBe(1);
    const person = async (id: string) => (await db.query(`SELECT subject_email, subject_external_id FROM decisions.decision_sessions WHERE id = $1`, [id]))[0];
    expect(await person(old)).toEqual({ subject_email: null, subject_external_id: null });
    expect(await person(recent)).toEqual({ subject_email: 'ended.lately@example.com', subject_external_id: 'ext-ended.lately@example.com' });
    expect(await person(decided)).toEqual({ subject_email: 'decided.long.ago@example.com', subject_external_id: 'ext-decided.long.ago@example.com' });
  });
});
