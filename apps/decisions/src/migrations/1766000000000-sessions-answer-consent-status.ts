import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * consent_status weighs the person's hosted consent decisions with their records: a session keeps
 * each purpose's outcome (an objection and a notice are told apart, as the outcome events tell them),
 * and the decided consent sessions of a person in an application are found without a scan.
 */
export class SessionsAnswerConsentStatus1766000000000 implements MigrationInterface {
  name = 'SessionsAnswerConsentStatus1766000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD COLUMN "purpose_outcomes" jsonb`);
    await runner.query(
      `CREATE INDEX "IX_decision_sessions_subject_consents" ON "decisions"."decision_sessions" ("subject_id", "application_id") WHERE "record_id" IS NOT NULL AND "kind" = 'consent'`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_subject_consents"`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "purpose_outcomes"`);
  }
}
