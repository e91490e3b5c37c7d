import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A consent given on the hosted pages can be withdrawn one purpose at a time on the person's records
 * page, as a record's can: each such withdrawal is a mark on the session (`withdrawals`, the shape of
 * a record's: purpose, time, channel), appended, never rewriting what the person decided. Revoking
 * the session still takes back what is left. Sessions before it have none: the column's constant
 * default, which PostgreSQL fills in without rewriting the table.
 */
export class HostedConsentsWithdrawnByPurpose1766800000000 implements MigrationInterface {
  name = 'HostedConsentsWithdrawnByPurpose1766800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD COLUMN "withdrawals" jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "withdrawals"`);
  }
}
