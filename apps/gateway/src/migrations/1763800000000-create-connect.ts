import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateConnect1763800000000 implements MigrationInterface {
  name = 'CreateConnect1763800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "gateway"."applications" (
        "id" text NOT NULL,
        "account_id" text NOT NULL,
        "name" text NOT NULL,
        "environment" text NOT NULL,
        "region" text NOT NULL,
        "authored_in" character(2) NOT NULL,
        "revision" integer NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_applications" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IDX_applications_account" ON "gateway"."applications" ("account_id")`);
    await runner.query(`
      CREATE TABLE "gateway"."api_tokens" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "name" text,
        "token_hash" character(64) NOT NULL,
        "scopes" text array NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "last_used_at" TIMESTAMP WITH TIME ZONE,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_api_tokens" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IDX_api_tokens_application" ON "gateway"."api_tokens" ("application_id")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_api_tokens_hash" ON "gateway"."api_tokens" ("token_hash")`);
    await runner.query(`
      CREATE TABLE "gateway"."publishable_keys" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "key_hash" character(64) NOT NULL,
        "key_prefix" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_publishable_keys" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IDX_publishable_keys_application" ON "gateway"."publishable_keys" ("application_id")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_publishable_keys_hash" ON "gateway"."publishable_keys" ("key_hash")`);
    await runner.query(`
      CREATE TABLE "gateway"."allowed_origins" (
        "application_id" text NOT NULL,
        "origin" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_allowed_origins" PRIMARY KEY ("application_id", "origin")
      )`);
    await runner.query(`
      CREATE TABLE "gateway"."activity_events" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "application_id" text,
        "detail" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_activity_events" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IDX_activity_events_type_time" ON "gateway"."activity_events" ("type", "occurred_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['activity_events', 'allowed_origins', 'publishable_keys', 'api_tokens', 'applications']) {
      await runner.query(`DROP TABLE "gateway"."${table}"`);
    }
  }
}
