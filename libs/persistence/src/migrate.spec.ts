import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dropDatabase, ensureDatabase } from './ensure-database';
import { migrateServiceSchema } from './migrate';
import { createServiceDataSource } from './service-data-source';

class CreateThings1700000000000 implements MigrationInterface {
  name = 'CreateThings1700000000000';
  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE TABLE "things"."things" ("id" text PRIMARY KEY)`);
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "things"."things"`);
  }
}

/** A later release's migration. */
class ThingsGetASize1700000000001 implements MigrationInterface {
  name = 'ThingsGetASize1700000000001';
  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "things"."things" ADD COLUMN "size" integer`);
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "things"."things" DROP COLUMN "size"`);
  }
}

/**
 * migrateServiceSchema against the real PostgreSQL: a release brings its schema up to date, and a
 * release older than the schema (one started again on a database a newer release has migrated, a
 * rollback of the image) refuses to start, naming the migrations it does not know, instead of
 * starting and failing request after request on tables it no longer understands.
 */
describe('migrateServiceSchema', () => {
  const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  server.pathname = `/t_migrate_${randomBytes(5).toString('hex')}`;
  const url = server.toString();
  const release = (migrations: Function[]) => createServiceDataSource({ url, schema: 'things', entities: [], migrations, poolSize: 2 });

  beforeAll(() => ensureDatabase(url));
  afterAll(() => dropDatabase(url));

  it('runs what is pending, then refuses a release that lacks migrations the schema has', async () => {
    const newer = release([CreateThings1700000000000, ThingsGetASize1700000000001]);
    await newer.initialize();
    try {
      expect(await migrateServiceSchema(newer)).toEqual(['CreateThings1700000000000', 'ThingsGetASize1700000000001']);
      expect(await migrateServiceSchema(newer)).toEqual([]);
    } finally {
      await newer.destroy();
    }

    const older = release([CreateThings1700000000000]);
    await older.initialize();
    try {
      await expect(migrateServiceSchema(older)).rejects.toThrow(
        /schema "things" was migrated by a newer release \(ThingsGetASize1700000000001\).*restore the backup taken before the upgrade/,
      );
    } finally {
      await older.destroy();
    }
  });
});
