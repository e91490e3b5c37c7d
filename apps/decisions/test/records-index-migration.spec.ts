import 'reflect-metadata';
import { createServiceDataSource, migrateServiceSchema } from '@dcr/persistence';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { Client } from 'pg';
import { decisionsService } from '../src/decisions.service';
import { RecordsReadByPage1766531000000 } from '../src/migrations/1766531000000-records-read-by-page';

/**
 * The records page's indexes are built while the country keeps recording: an upgrade of a country
 * with millions of consent records must not stop the Record API for the build's minutes. A plain
 * CREATE INDEX waits for the writes in progress and, while it waits and builds, every new insert
 * waits behind it; built CONCURRENTLY, a new insert goes on.
 */
describe('decisions migration RecordsReadByPage: the indexes are built without stopping writes', () => {
  let database: MigratedServiceDatabase;
  const before = decisionsService.migrations.filter((migration) => migration !== RecordsReadByPage1766531000000);

  beforeAll(async () => {
    database = await migratedServiceDatabase({ ...decisionsService, migrations: before }, 'records_index_migration');
  });
  afterAll(async () => {
    await database?.close();
  });

  const connect = async () => {
    const options = database.dataSource.options as { url: string };
    const client = new Client({ connectionString: options.url });
    await client.connect();
    return client;
  };
  const indexes = async () =>
    (
      await database.dataSource.query(
        `SELECT c."relname" AS "name", i."indisvalid" AS "valid" FROM pg_index i JOIN pg_class c ON c.oid = i."indexrelid" JOIN pg_class t ON t.oid = i."indrelid"
          JOIN pg_namespace n ON n.oid = t."relnamespace" WHERE n."nspname" = 'decisions' AND t."relname" = 'consent_records' AND c."relname" LIKE 'IX_consent_records_%' ORDER BY 1`,
      )
    ).map((row: { name: string; valid: boolean }) => `${row.name}${row.valid ? '' : ' (invalid)'}`);

  it('lets a new write in while the migration waits for one in progress, and ends with the two indexes valid and the old one gone', async () => {
    expect(await indexes()).toContain('IX_consent_records_subject');
    // A write in progress on the records table (the lock an insert takes), not yet committed.
    const inProgress = await connect();
    const newWrite = await connect();
    const upgrade = createServiceDataSource({ url: (database.dataSource.options as { url: string }).url, schema: 'decisions', entities: decisionsService.entities, migrations: decisionsService.migrations, poolSize: 2 });
    try {
      await inProgress.query('BEGIN');
      await inProgress.query('LOCK TABLE "decisions"."consent_records" IN ROW EXCLUSIVE MODE');
      await upgrade.initialize();
      const migrating = migrateServiceSchema(upgrade);
      migrating.catch(() => undefined);
      // Until the migration's index build is waiting for the write in progress.
      for (let i = 0; ; i++) {
        const {
          rows: [waiting],
        } = await newWrite.query(`SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE "query" LIKE 'CREATE INDEX%' AND "wait_event" IS NOT NULL`);
        if (waiting.n > 0) break;
        if (i > 200) throw new Error('the migration never started building the index');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // A new write meanwhile: with a plain CREATE INDEX it would queue behind the build's lock.
      await newWrite.query('BEGIN');
      await newWrite.query(`SET LOCAL lock_timeout = '3s'`);
      await expect(newWrite.query('LOCK TABLE "decisions"."consent_records" IN ROW EXCLUSIVE MODE')).resolves.toBeDefined();
      await newWrite.query('COMMIT');
      await inProgress.query('COMMIT');
      expect(await migrating).toEqual(['RecordsReadByPage1766531000000']);
      expect(await indexes()).toEqual(['IX_consent_records_chain_order', 'IX_consent_records_person_page']);
    } finally {
      await inProgress.query('ROLLBACK').catch(() => undefined);
      await Promise.all([inProgress.end(), newWrite.end()]);
      if (upgrade.isInitialized) await upgrade.destroy();
    }
  });

  it('builds again an index a stopped upgrade left invalid, and keeps a valid one', async () => {
    // As if the process had stopped in the middle of the first build: the index exists, invalid.
    await database.dataSource.query('DROP INDEX "decisions"."IX_consent_records_person_page"');
    await database.dataSource.query(`CREATE INDEX "IX_consent_records_person_page" ON "decisions"."consent_records" ("subject_id")`);
    await database.dataSource.query(
      `UPDATE pg_index SET "indisvalid" = false WHERE "indexrelid" = '"decisions"."IX_consent_records_person_page"'::regclass`,
    );
    expect(await indexes()).toContain('IX_consent_records_person_page (invalid)');
    const runner = database.dataSource.createQueryRunner();
    try {
      await new RecordsReadByPage1766531000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await indexes()).toEqual(['IX_consent_records_chain_order', 'IX_consent_records_person_page']);
    const [definition] = await database.dataSource.query(`SELECT pg_get_indexdef('"decisions"."IX_consent_records_person_page"'::regclass) AS "sql"`);
    expect(definition.sql).toContain('(subject_id, captured_at, recorded_at, record_id)');
  });
});
