import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateFlowsAndSessions1763900000000 implements MigrationInterface {
  name = 'CreateFlowsAndSessions1763900000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."flow_versions" (
        "id" text NOT NULL,
        "version" integer NOT NULL,
        "application_id" text NOT NULL,
        "status" text NOT NULL,
        "terms" jsonb NOT NULL,
        "terms_fingerprint" text NOT NULL,
        "authored_in" text NOT NULL,
        "revision" integer NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "activated_at" TIMESTAMP WITH TIME ZONE,
        "superseded_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_flow_versions" PRIMARY KEY ("id", "version")
      )`);
    await runner.query(`CREATE INDEX "IX_flow_versions_application" ON "decisions"."flow_versions" ("application_id", "created_at")`);

    await runner.query(`
      CREATE TABLE "decisions"."outbox" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "application_id" text NOT NULL,
        "internal" boolean NOT NULL DEFAULT false,
        "data" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "published_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_outbox" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_outbox_unpublished" ON "decisions"."outbox" ("occurred_at") WHERE "published_at" IS NULL`);

    await runner.query(`
      CREATE TABLE "decisions"."dev_mailbox" (
        "id" text NOT NULL,
        "to_address" text NOT NULL,
        "subject" text NOT NULL,
        "text" text NOT NULL,
        "html" text NOT NULL,
        "sent_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_dev_mailbox" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_dev_mailbox_to" ON "decisions"."dev_mailbox" ("to_address", "sent_at")`);

    await runner.query(`
      CREATE TABLE "decisions"."decision_sessions" (
        "token" text NOT NULL,
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "kind" text NOT NULL,
        "path" text NOT NULL,
        "status" text NOT NULL,
        "created_via" text NOT NULL,
        "flow_id" text,
        "flow_version" integer,
        "delivery_mode" text NOT NULL,
        "embed_origin" text,
        "redirect_uri" text,
        "locale" text NOT NULL,
        "subject_id" text,
        "subject_email" text,
        "subject_external_id" text,
        "signed_in_at" TIMESTAMP WITH TIME ZONE,
        "approval" jsonb,
        "deadline_at" TIMESTAMP WITH TIME ZONE,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "outcome" text,
        "purpose_decisions" jsonb,
        "counter" jsonb,
        "completed_at" TIMESTAMP WITH TIME ZONE,
        "record_id" text,
        "consent_token_hash" text,
        "consent_token_expires_at" TIMESTAMP WITH TIME ZONE,
        "consent_token_consumed_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_decision_sessions" PRIMARY KEY ("token")
      )`);
    await runner.query(`CREATE INDEX "IX_decision_sessions_in_flight" ON "decisions"."decision_sessions" ("expires_at")
      WHERE "status" IN ('pending','authenticating','verifying','reviewing','informed','evidenced')`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_decision_sessions_id" ON "decisions"."decision_sessions" ("id")`);
    await runner.query(`CREATE INDEX "IX_decision_sessions_email" ON "decisions"."decision_sessions" ("subject_email", "status")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_decision_sessions_consent_token" ON "decisions"."decision_sessions" ("consent_token_hash")
      WHERE "consent_token_hash" IS NOT NULL`);

    await runner.query(`
      CREATE TABLE "decisions"."sign_in_codes" (
        "id" text NOT NULL,
        "session_token" text NOT NULL,
        "email" text NOT NULL,
        "code_hash" text NOT NULL,
        "attempts" integer NOT NULL DEFAULT 0,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "consumed_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_sign_in_codes" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_sign_in_codes_session" ON "decisions"."sign_in_codes" ("session_token", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "decisions"."sign_in_codes"`);
    await runner.query(`DROP TABLE "decisions"."decision_sessions"`);
    await runner.query(`DROP TABLE "decisions"."dev_mailbox"`);
    await runner.query(`DROP TABLE "decisions"."outbox"`);
    await runner.query(`DROP TABLE "decisions"."flow_versions"`);
  }
}
