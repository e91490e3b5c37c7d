import { MigrationInterface, QueryRunner } from 'typeorm';

const IN_FLIGHT = `"status" IN ('pending','authenticating','verifying','reviewing','informed','evidenced')`;

/**
 * Two fewer index entries per new decision session. `IX_decision_sessions_email` (e-mail, status)
 * served only the inbox's query, which `IX_decision_sessions_inbox` serves too; and the inbox index
 * now leaves out sessions without an e-mail (a decision created with no subject has none until the
 * person signs in), since the inbox looks sessions up by e-mail only. Each index entry written is WAL
 * the commit waits to flush (docs/performance.md, twelfth session).
 */
export class NarrowSessionIndexes1764900000000 implements MigrationInterface {
  name = 'NarrowSessionIndexes1764900000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_email"`);
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_inbox"`);
    await runner.query(`CREATE INDEX "IX_decision_sessions_inbox" ON "decisions"."decision_sessions" ("subject_email", "created_at")
      WHERE "subject_email" IS NOT NULL AND ${IN_FLIGHT}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_inbox"`);
    await runner.query(`CREATE INDEX "IX_decision_sessions_inbox" ON "decisions"."decision_sessions" ("subject_email", "created_at")
      WHERE ${IN_FLIGHT}`);
    await runner.query(`CREATE INDEX "IX_decision_sessions_email" ON "decisions"."decision_sessions" ("subject_email", "status")`);
  }
}
