import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's sign-in codes keep the address only as its keyed digest, as the inbox's do
 * (InboxKeepsNoAddress1765400000000): the code was stored before the person's home was checked, so
 * a person homed in another country who signed in on a session here left their address in this
 * country's database, refused (wrong_country) but not removed. Codes that hold an address are
 * dropped (they live ten minutes; a person asks for a new one).
 */
export class SignInCodesKeepNoAddress1765600000000 implements MigrationInterface {
  name = 'SignInCodesKeepNoAddress1765600000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "decisions"."sign_in_codes" WHERE "email" IS NOT NULL`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" ADD CONSTRAINT "CK_sign_in_codes_no_address" CHECK ("email" IS NULL)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" DROP CONSTRAINT "CK_sign_in_codes_no_address"`);
  }
}
