import { MigrationInterface, QueryRunner } from 'typeorm';

/** The gateway's outbox: configuration changes (credentials, allowed origins) on their way to the audit trail. */
export class CreateOutbox1764100000000 implements MigrationInterface {
  name = 'CreateOutbox1764100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "gateway"."outbox" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "application_id" text NOT NULL,
        "internal" boolean NOT NULL DEFAULT false,
        "data" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "published_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_outbox" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_outbox_unpublished" ON "gateway"."outbox" ("occurred_at") WHERE "published_at" IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "gateway"."outbox"`);
  }
}
