import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An import's report says how it ended: `in_progress` until its last chunk is recorded, `completed`,
 * or `failed` (with where and why) when a chunk failed after earlier ones were recorded. Before, a
 * report was written per chunk and always read `completed`, also for an import stopped half-way.
 * Reports written before were complete or are indistinguishable from complete: `completed`.
 */
export class ImportsSayHowTheyEnded1765700000000 implements MigrationInterface {
  name = 'ImportsSayHowTheyEnded1765700000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."consent_imports" ADD COLUMN "status" text NOT NULL DEFAULT 'completed', ADD COLUMN "failure" jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."consent_imports" DROP COLUMN "failure", DROP COLUMN "status"`);
  }
}
