import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A capture is committed by the person's home country, which may be another country than the one
 * holding it: which country commits it (claimed atomically, so it is committed in one country only)
 * and how many commits are under way there.
 */
export class CapturesCommittedInOneCountry1766100000000 implements MigrationInterface {
  name = 'CapturesCommittedInOneCountry1766100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."captures" ADD "committed_in" text`);
    await runner.query(`ALTER TABLE "decisions"."captures" ADD "commit_attempts" integer NOT NULL DEFAULT 0`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."captures" DROP COLUMN "commit_attempts"`);
    await runner.query(`ALTER TABLE "decisions"."captures" DROP COLUMN "committed_in"`);
  }
}
