import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A capture requested with an `Idempotency-Key` answers a retry of the request (the gateway keeps no
 * answer of a 5xx, so the retry reaches the service again): the key's digest, unique in the
 * application (concurrent duplicates included), the body's digest and the token sealed for the key.
 */
export class CapturesAnswerTheirRetries1766400000000 implements MigrationInterface {
  name = 'CapturesAnswerTheirRetries1766400000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."captures" ADD "retry_key_digest" text, ADD "request_digest" text, ADD "sealed_token" text`);
    await runner.query(
      `CREATE UNIQUE INDEX "UQ_captures_retry_key" ON "decisions"."captures" ("application_id", "retry_key_digest") WHERE "retry_key_digest" IS NOT NULL`,
    );
    await runner.query(`CREATE INDEX "IX_captures_retry_expiry" ON "decisions"."captures" ("created_at") WHERE "retry_key_digest" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_captures_retry_expiry"`);
    await runner.query(`DROP INDEX "decisions"."UQ_captures_retry_key"`);
    await runner.query(`ALTER TABLE "decisions"."captures" DROP COLUMN "sealed_token", DROP COLUMN "request_digest", DROP COLUMN "retry_key_digest"`);
  }
}
