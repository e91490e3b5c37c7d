import { MigrationInterface, QueryRunner } from 'typeorm';

/** A hosted session is found by its record's id (the records page, a wrong-door check from a peer country) without a scan. */
export class SessionsFoundByRecord1765800000000 implements MigrationInterface {
  name = 'SessionsFoundByRecord1765800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX "IX_decision_sessions_record" ON "decisions"."decision_sessions" ("record_id") WHERE "record_id" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_record"`);
  }
}
