import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateInbox1764000000000 implements MigrationInterface {
  name = 'CreateInbox1764000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "decisions"."inbox_sessions" (
        "id" text NOT NULL,
        "token_hash" text NOT NULL,
        "email" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_inbox_sessions" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_inbox_sessions_token_hash" ON "decisions"."inbox_sessions" ("token_hash")`);
    // Inbox sign-in codes are sign-in codes for no session (`session_token` = 'inbox'), found by address.
    await runner.query(`CREATE INDEX "IX_sign_in_codes_email" ON "decisions"."sign_in_codes" ("email", "created_at")`);
    // The inbox lists in-flight sessions by the person's e-mail, newest first or by deadline.
    await runner.query(`CREATE INDEX "IX_decision_sessions_inbox" ON "decisions"."decision_sessions" ("subject_email", "created_at")
      WHERE "status" IN ('pending','authenticating','verifying','reviewing','informed','evidenced')`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."IX_decision_sessions_inbox"`);
    await runner.query(`DROP INDEX "decisions"."IX_sign_in_codes_email"`);
    await runner.query(`DROP TABLE "decisions"."inbox_sessions"`);
  }
}
