import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';
import { CAPTURE_RETRY_SWEEP_SQL, CAPTURE_SWEEP_SQL } from '../src/records/captures';

/** The sweep of captures that leave no record, against the real PostgreSQL. */
describe('the capture sweep', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'capture_sweep');
  });

  afterAll(async () => {
    await database?.close();
  });

  const capture = (id: string, expired: string, state: { committedIn?: string; recordId?: string } = {}) =>
    database.dataSource.query(
      `INSERT INTO "decisions"."captures" ("id", "token_hash", "application_id", "flow_id", "flow_version", "channel", "decisions", "created_at", "expires_at", "record_id", "committed_in", "commit_attempts")
       VALUES ($1, md5($1), 'tp_us_sweep', 'flw_us_sweep', 1, 'form_capture', '{}', now() - interval '2 days', now() - $2::interval, $3, $4, $5)`,
      [id, expired, state.recordId ?? null, state.committedIn ?? null, state.committedIn ? 1 : 0],
    );

  it('deletes what expired uncommitted, a claim left without a record an hour after expiry, and keeps the rest', async () => {
    await capture('cap_open_expired', '1 minute');
    await capture('cap_open_live', '-1 hour');
    await capture('cap_claimed_just_expired', '10 minutes', { committedIn: 'DE' });
    await capture('cap_claimed_stuck', '2 hours', { committedIn: 'DE' });
    await capture('cap_committed', '3 days', { committedIn: 'US', recordId: 'rec_us00000000000000000000' });
    const removed: unknown[] = await database.dataSource.query(CAPTURE_SWEEP_SQL);
    expect(removed).toHaveLength(2);
    const left = (await database.dataSource.query(`SELECT "id" FROM "decisions"."captures" ORDER BY "id"`)).map((row: { id: string }) => row.id);
    // The stuck claim (its settlement lost) used to stay for ever, refusing every commit as busy.
    expect(left).toEqual(['cap_claimed_just_expired', 'cap_committed', 'cap_open_live']);
  });

  it("forgets a capture's Idempotency-Key (and the token sealed for it) after 24 hours, keeping the capture", async () => {
    const keyed = (id: string, made: string) =>
      database.dataSource.query(
        `INSERT INTO "decisions"."captures" ("id", "token_hash", "application_id", "flow_id", "flow_version", "channel", "decisions", "created_at", "expires_at", "record_id", "retry_key_digest", "request_digest", "sealed_token")
         VALUES ($1, md5($1), 'tp_us_sweep', 'flw_us_sweep', 1, 'form_capture', '{}', now() - $2::interval, now() + interval '1 hour', 'rec_us00000000000000000001', md5($1), md5($1), 'v1.sealed')`,
        [id, made],
      );
    await keyed('cap_keyed_old', '25 hours');
    await keyed('cap_keyed_new', '23 hours');
    await database.dataSource.query(CAPTURE_RETRY_SWEEP_SQL, [new Date(Date.now() - 24 * 3600 * 1000)]);
    const rows = await database.dataSource.query(
      `SELECT "id", "retry_key_digest" IS NOT NULL AS "key", "sealed_token" IS NOT NULL AS "token" FROM "decisions"."captures" WHERE "id" LIKE 'cap_keyed_%' ORDER BY "id"`,
    );
    expect(rows).toEqual([
      { id: 'cap_keyed_new', key: true, token: true },
      { id: 'cap_keyed_old', key: false, token: false },
    ]);
  });
});
