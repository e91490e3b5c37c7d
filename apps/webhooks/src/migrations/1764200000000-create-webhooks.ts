import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWebhooks1764200000000 implements MigrationInterface {
  name = 'CreateWebhooks1764200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "webhooks"."subscriptions" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "url" text NOT NULL,
        "events" text array NOT NULL,
        "environment" text NOT NULL,
        "status" text NOT NULL,
        "secret_sealed" text NOT NULL,
        "consecutive_failures" integer NOT NULL DEFAULT 0,
        "disabled_reason" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "deleted_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_subscriptions" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_subscriptions_application" ON "webhooks"."subscriptions" ("application_id")`);
    await runner.query(`
      CREATE TABLE "webhooks"."deliveries" (
        "id" text NOT NULL,
        "subscription_id" text NOT NULL,
        "application_id" text NOT NULL,
        "event_id" text NOT NULL,
        "event_type" text NOT NULL,
        "body" text NOT NULL,
        "status" text NOT NULL,
        "test" boolean NOT NULL DEFAULT false,
        "replay_of" text,
        "attempts" integer NOT NULL DEFAULT 0,
        "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        "lease_until" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "completed_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_deliveries" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_deliveries_event" ON "webhooks"."deliveries" ("subscription_id", "event_id") WHERE "test" = false AND "replay_of" IS NULL`);
    await runner.query(`CREATE INDEX "IX_deliveries_due" ON "webhooks"."deliveries" ("next_attempt_at") WHERE "status" = 'pending'`);
    await runner.query(`CREATE INDEX "IX_deliveries_leased" ON "webhooks"."deliveries" ("lease_until") WHERE "status" = 'delivering'`);
    await runner.query(`CREATE INDEX "IX_deliveries_subscription" ON "webhooks"."deliveries" ("subscription_id", "created_at")`);
    await runner.query(`
      CREATE TABLE "webhooks"."delivery_attempts" (
        "delivery_id" text NOT NULL,
        "attempt" integer NOT NULL,
        "started_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "duration_ms" integer NOT NULL,
        "request_headers" jsonb NOT NULL,
        "response_status" integer,
        "response_excerpt" text,
        "error" text,
        "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_delivery_attempts" PRIMARY KEY ("delivery_id", "attempt")
      )`);
    await runner.query(`
      CREATE TABLE "webhooks"."outbox" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "application_id" text NOT NULL,
        "internal" boolean NOT NULL DEFAULT false,
        "data" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "published_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_outbox" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_outbox_unpublished" ON "webhooks"."outbox" ("occurred_at") WHERE "published_at" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['outbox', 'delivery_attempts', 'deliveries', 'subscriptions']) await runner.query(`DROP TABLE "webhooks"."${table}"`);
  }
}
