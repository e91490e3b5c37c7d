import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIdempotencyKeys1764000000000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1764000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "gateway"."idempotency_keys" (
        "scope" text NOT NULL,
        "key_hash" text NOT NULL,
        "fingerprint" text NOT NULL,
        "state" text NOT NULL,
        "response_status" integer,
        "response_body" text,
        "response_type" text,
        "claimed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_idempotency_keys" PRIMARY KEY ("scope", "key_hash")
      )`);
    await runner.query(`CREATE INDEX "IX_idempotency_keys_created" ON "gateway"."idempotency_keys" ("created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "gateway"."idempotency_keys"`);
  }
}
