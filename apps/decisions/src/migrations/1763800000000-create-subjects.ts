import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSubjects1763800000000 implements MigrationInterface {
  name = 'CreateSubjects1763800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."subjects" (
        "id" text NOT NULL,
        "application_id" text NOT NULL,
        "email" text,
        "external_id" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_subjects" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_subjects_application_external_id"
      ON "decisions"."subjects" ("application_id", "external_id") WHERE "external_id" IS NOT NULL`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_subjects_application_email"
      ON "decisions"."subjects" ("application_id", "email") WHERE "email" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "decisions"."subjects"`);
  }
}
