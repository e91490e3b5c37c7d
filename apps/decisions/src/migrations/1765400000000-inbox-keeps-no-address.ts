import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inbox keeps no e-mail address it can read (docs/architecture.md, Residency): a sign-in code
 * is kept by the address's keyed digest (`email_digest`; `email` stays for a session's own codes),
 * and a signed-in inbox keeps the address sealed under its own bearer token (`email_sealed`), which
 * the service holds only as a hash. The inbox sign-in accepts any address, so before this a person
 * homed in another country who signed in here left their address here for the code's ten minutes
 * and the inbox's twelve hours. Codes and inbox sign-ins made before are dropped (they hold
 * addresses): a person asks for a new code.
 */
export class InboxKeepsNoAddress1765400000000 implements MigrationInterface {
  name = 'InboxKeepsNoAddress1765400000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "decisions"."sign_in_codes" WHERE "session_token" = 'inbox'`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" ALTER COLUMN "email" DROP NOT NULL, ADD COLUMN "email_digest" text`);
    await runner.query(`DROP INDEX "decisions"."IX_sign_in_codes_email"`);
    await runner.query(`CREATE INDEX "IX_sign_in_codes_email_digest" ON "decisions"."sign_in_codes" ("email_digest", "created_at") WHERE "email_digest" IS NOT NULL`);
    await runner.query(`DELETE FROM "decisions"."inbox_sessions"`);
    await runner.query(`ALTER TABLE "decisions"."inbox_sessions" DROP COLUMN "email", ADD COLUMN "email_sealed" text NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "decisions"."inbox_sessions"`);
    await runner.query(`ALTER TABLE "decisions"."inbox_sessions" DROP COLUMN "email_sealed", ADD COLUMN "email" text NOT NULL`);
    await runner.query(`DROP INDEX "decisions"."IX_sign_in_codes_email_digest"`);
    await runner.query(`DELETE FROM "decisions"."sign_in_codes" WHERE "email" IS NULL`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" DROP COLUMN "email_digest", ALTER COLUMN "email" SET NOT NULL`);
    await runner.query(`CREATE INDEX "IX_sign_in_codes_email" ON "decisions"."sign_in_codes" ("email", "created_at")`);
  }
}
