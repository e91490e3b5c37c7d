import { MigrationInterface, QueryRunner } from 'typeorm';

/** Application settings: browser commit (captures committed by the browser, lower-assurance channel). */
export class AddApplicationSettings1764500000000 implements MigrationInterface {
  name = 'AddApplicationSettings1764500000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "gateway"."applications" ADD "browser_commit" boolean NOT NULL DEFAULT false`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "gateway"."applications" DROP COLUMN "browser_commit"`);
  }
}
