import { DataSource } from 'typeorm';
import { InProcessBus } from '@dcr/transport';
import { RetentionSweep } from '../../apps/decisions/src/retention/retention-sweep';
import { randomSecret, RunningCountry, startCountry } from '../support/country-harness';

/**
 * What the decisions service keeps only for a while (docs/architecture.md, Retention), on the tables
 * its own migrations made: sign-in codes a day after they were asked for, inbox sign-ins a day after
 * they expired, development mail after a week; anything younger stays.
 */
describe('the retention sweep of the decisions service', () => {
  let us: RunningCountry;
  let db: DataSource;

  beforeAll(async () => {
    us = await startCountry({ transport: 'inprocess', bus: new InProcessBus(), subjectRefKey: randomSecret(), adminToken: randomSecret(), country: 'US', peers: [] });
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

    expect(await new RetentionSweep(db).sweep()).toEqual({ 'sign-in codes': 1, 'inbox sign-ins': 1, 'development mail': 1 });
    const ids = async (table: string) => (await db.query(`SELECT id FROM decisions.${table} WHERE id LIKE '%_old' OR id LIKE '%_fresh' ORDER BY id`)).map((row: { id: string }) => row.id);
    expect([await ids('sign_in_codes'), await ids('inbox_sessions'), await ids('dev_mailbox')]).toEqual([['otp_fresh'], ['inb_fresh'], ['mail_fresh']]);
  });
});
