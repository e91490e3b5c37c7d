import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateFormConnections1764600000000 implements MigrationInterface {
  name = 'CreateFormConnections1764600000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."form_connections" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "platform" text NOT NULL,
        "form_id" text NOT NULL,
        "flow_id" text NOT NULL,
        "mapping" jsonb NOT NULL,
        "form_definition" jsonb NOT NULL,
        "secret_sealed" text NOT NULL,
        "previous_secret_sealed" text,
        "secret_rotated_at" TIMESTAMP WITH TIME ZONE,
        "access_token_sealed" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_form_connections" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_form_connections_application" ON "decisions"."form_connections" ("application_id", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "decisions"."form_connections"`);
  }
}
