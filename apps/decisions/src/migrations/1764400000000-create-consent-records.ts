import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateConsentRecords1764400000000 implements MigrationInterface {
  name = 'CreateConsentRecords1764400000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."consent_records" (
        "record_id" text NOT NULL,
        "application_id" text NOT NULL,
        "flow_id" text NOT NULL,
        "flow_version" integer NOT NULL,
        "subject_id" text NOT NULL,
        "purposes" jsonb NOT NULL,
        "status" text NOT NULL,
        "channel" text NOT NULL,
        "captured_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "recorded_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "idempotency_key" text,
        "request_fingerprint" text,
        "supersedes" text,
        "withdrawals" jsonb NOT NULL,
        CONSTRAINT "PK_consent_records" PRIMARY KEY ("record_id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_consent_records_idempotency" ON "decisions"."consent_records" ("application_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL`);
    await runner.query(`CREATE INDEX "IX_consent_records_subject" ON "decisions"."consent_records" ("subject_id", "flow_id", "recorded_at")`);
    await runner.query(`
      CREATE TABLE "decisions"."consent_imports" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "flow_id" text NOT NULL,
        "summary" jsonb NOT NULL,
        "rows" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_consent_imports" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_consent_imports_application" ON "decisions"."consent_imports" ("application_id", "created_at")`);
    await runner.query(`
      CREATE TABLE "decisions"."captures" (
        "id" text NOT NULL,
        "token_hash" text NOT NULL,
        "application_id" text NOT NULL,
        "flow_id" text NOT NULL,
        "flow_version" integer NOT NULL,
        "channel" text NOT NULL,
        "decisions" jsonb NOT NULL,
        "wording_verdict" jsonb,
        "origin" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "record_id" text,
        CONSTRAINT "PK_captures" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_captures_token_hash" ON "decisions"."captures" ("token_hash")`);
    await runner.query(`CREATE INDEX "IX_captures_expiry" ON "decisions"."captures" ("expires_at") WHERE "record_id" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "decisions"."captures"`);
    await runner.query(`DROP TABLE "decisions"."consent_imports"`);
    await runner.query(`DROP TABLE "decisions"."consent_records"`);
  }
}
