import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each entry counts the registrations that relied on it (`reliances`) and the releases it was sent
 * (`releases`), so a release takes it out once every party that inserted or relied on it has released
 * it (none of them wrote the person): before, the first reliance kept it for good, and an entry that
 * two requests relied on and neither wrote named no one here (DirectoryRepository, RELEASE_CLAIMS).
 * An entry relied on before this migration has no count of its reliances (`updated_at` past its
 * `recorded_at`, `reliances` 0) and stays kept for good, as it was. Columns with constant defaults:
 * no rewrite of the table.
 */
export class DirectoryCountsItsParties1766700000000 implements MigrationInterface {
  name = 'DirectoryCountsItsParties1766700000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "residency_router"."directory_entries" ADD "reliances" integer NOT NULL DEFAULT 0`);
    await runner.query(`ALTER TABLE "residency_router"."directory_entries" ADD "releases" integer NOT NULL DEFAULT 0`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "residency_router"."directory_entries" DROP COLUMN "releases"`);
    await runner.query(`ALTER TABLE "residency_router"."directory_entries" DROP COLUMN "reliances"`);
  }
}
