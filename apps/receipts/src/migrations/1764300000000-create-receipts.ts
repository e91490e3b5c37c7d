import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateReceipts1764300000000 implements MigrationInterface {
  name = 'CreateReceipts1764300000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "receipts"."receipts" (
        "record_id" text NOT NULL,
        "application_id" text NOT NULL,
        "source_event_id" text NOT NULL,
        "frozen" jsonb NOT NULL,
        "frozen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_receipts" PRIMARY KEY ("record_id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_receipts_source_event" ON "receipts"."receipts" ("source_event_id")`);
    await runner.query(`CREATE INDEX "IX_receipts_application" ON "receipts"."receipts" ("application_id", "frozen_at")`);
    await runner.query(`
      CREATE TABLE "receipts"."lifecycle_facts" (
        "source_event_id" text NOT NULL,
        "record_id" text NOT NULL,
        "at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "fact" jsonb NOT NULL,
        CONSTRAINT "PK_lifecycle_facts" PRIMARY KEY ("source_event_id")
      )`);
    await runner.query(`CREATE INDEX "IX_lifecycle_facts_record" ON "receipts"."lifecycle_facts" ("record_id", "at")`);
    await runner.query(`
      CREATE TABLE "receipts"."signing_keys" (
        "kid" text NOT NULL,
        "alg" text NOT NULL,
        "public_jwk" jsonb NOT NULL,
        "valid_from" TIMESTAMP WITH TIME ZONE NOT NULL,
        "valid_until" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_signing_keys" PRIMARY KEY ("kid")
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['signing_keys', 'lifecycle_facts', 'receipts']) await runner.query(`DROP TABLE "receipts"."${table}"`);
  }
}
