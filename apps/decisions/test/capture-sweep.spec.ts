import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';
import { CAPTURE_SWEEP_SQL } from '../src/records/captures';

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
});
