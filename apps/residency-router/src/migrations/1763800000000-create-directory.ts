import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateDirectory1763800000000 implements MigrationInterface {
  name = 'CreateDirectory1763800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "residency_router"."directory_entries" (
        "reference" character(64) NOT NULL,
        "home_country" character(2) NOT NULL,
        "status" text NOT NULL,
        "recorded_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_directory_entries" PRIMARY KEY ("reference")
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "residency_router"."directory_entries"`);
  }
}
