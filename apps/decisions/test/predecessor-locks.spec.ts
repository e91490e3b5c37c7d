import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';
import { PREDECESSORS_UNCHANGED } from '../src/records/import-batch';

/**
 * The check a batch written without locks makes of the newest records it read (PREDECESSORS_UNCHANGED),
 * against the real PostgreSQL: it locks them in record_id order, the order a batch's transaction
 * updates older records in, so that the two never wait for each other (a review caught the deadlock
 * when it locked them in the order they were read).
 */
describe('the predecessors check of a batch written without locks', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'predecessor_locks', 3);
    for (const id of ['rec_us00000000000000000001', 'rec_us00000000000000000002']) {
      await database.dataSource.query(
        `INSERT INTO "decisions"."consent_records" ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at", "withdrawals")
         VALUES ($1, 'tp_us_locks', 'flw_us_locks', 1, $1, '{}', 'granted', 'controller_attested', now(), now(), '[]')`,
        [id],
      );
    }
  });

  afterAll(async () => {
    await database?.close();
  });

  it('locks the records in record_id order whatever order they were read in, and fails when their marks changed', async () => {
    const writer = database.dataSource.createQueryRunner();
    const batch = database.dataSource.createQueryRunner();
    await writer.connect();
    await batch.connect();
    try {
      // Read newest record second first, as a batch's people may come.
      const read = JSON.stringify([{ id: 'rec_us00000000000000000002', marks: [] }, { id: 'rec_us00000000000000000001', marks: [] }]);
      await writer.startTransaction();
      await writer.query(`SELECT 1 FROM "decisions"."consent_records" WHERE "record_id" = 'rec_us00000000000000000001' FOR UPDATE`);
      await batch.startTransaction();
      const checked = batch.query(`SELECT ${PREDECESSORS_UNCHANGED(1)} AS "unchanged"`, [read]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Locked in read order, the check would hold ...02 while it waits for ...01, and this would wait
      // for it in turn: a deadlock. In record_id order it holds nothing yet.
      await writer.query(`SET LOCAL lock_timeout = '2s'`);
      await writer.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = '[{"purpose": "a", "at": "2026-11-28T00:00:00.000Z"}]' WHERE "record_id" = 'rec_us00000000000000000002'`);
      await writer.commitTransaction();
      // The check then sees the changed marks on the row it locked: it fails.
      expect((await checked)[0].unchanged).toBe(false);
      await batch.commitTransaction();
      const again = await batch.query(`SELECT ${PREDECESSORS_UNCHANGED(1)} AS "unchanged"`, [
        JSON.stringify([{ id: 'rec_us00000000000000000002', marks: [{ purpose: 'a', at: '2026-11-28T00:00:00.000Z' }] }, { id: 'rec_us00000000000000000001', marks: [] }]),
      ]);
      expect(again[0].unchanged).toBe(true);
    } finally {
      if (writer.isTransactionActive) await writer.rollbackTransaction();
      if (batch.isTransactionActive) await batch.rollbackTransaction();
      await writer.release();
      await batch.release();
    }
  });

  it('fails when a record was updated since it was read, its marks the same (a hosted consent completed meanwhile touches it), and holds without the version', async () => {
    const { dataSource } = database;
    const [{ version }] = await dataSource.query(`SELECT "xmin"::text AS "version" FROM "decisions"."consent_records" WHERE "record_id" = 'rec_us00000000000000000001'`);
    const read = (withVersion: boolean) => JSON.stringify([{ id: 'rec_us00000000000000000001', marks: [], ...(withVersion ? { version } : {}) }]);
    const check = async (document: string) => (await dataSource.query(`SELECT ${PREDECESSORS_UNCHANGED(1)} AS "unchanged"`, [document]))[0].unchanged as boolean;
    expect(await check(read(true))).toBe(true);
    const toucher = dataSource.createQueryRunner();
    await toucher.connect();
    try {
      await toucher.startTransaction();
      await toucher.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" WHERE "record_id" = 'rec_us00000000000000000001'`);
      // Checked while the update waits to commit: the check waits for it, then sees the new version.
      const checked = check(read(true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await toucher.commitTransaction();
      expect(await checked).toBe(false);
      expect(await check(read(false))).toBe(true);
    } finally {
      if (toucher.isTransactionActive) await toucher.rollbackTransaction();
      await toucher.release();
    }
  });
});
