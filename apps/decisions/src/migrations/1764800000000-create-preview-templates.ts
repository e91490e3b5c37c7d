import { MigrationInterface, QueryRunner } from 'typeorm';

/** Preview templates: handles on one flow version for the organisation's preview tooling. */
export class CreatePreviewTemplates1764800000000 implements MigrationInterface {
  name = 'CreatePreviewTemplates1764800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."preview_templates" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "flow_id" text NOT NULL,
        "flow_version" integer NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_preview_templates" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE INDEX "IX_preview_templates_application" ON "decisions"."preview_templates" ("application_id", "created_at")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "decisions"."preview_templates"`);
  }
}
