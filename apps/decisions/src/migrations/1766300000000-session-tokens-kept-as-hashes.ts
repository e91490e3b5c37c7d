import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The session token is a credential: kept, like every other, only as hashCredential's hash (the
 * lower-case hex SHA-256 of its UTF-8 bytes, computed here in SQL) in `token_hash`, the lookup key.
 * New sessions also keep the nonce their token is derived from (`token_nonce`); the sessions already
 * open had random tokens, which cannot be derived: they keep working through their link (found by
 * the hash) and the inbox leaves them out until they expire. The sessions are keyed by their public
 * id instead of the token, and a session's sign-in codes name it by that id (`session_id`; 'inbox'
 * stays 'inbox'). Codes of no session left are dropped. There is no way back to the tokens: `down`
 * restores the columns only for an empty table.
 */
export class SessionTokensKeptAsHashes1766300000000 implements MigrationInterface {
  name = 'SessionTokensKeptAsHashes1766300000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD "token_hash" text, ADD "token_nonce" text`);
    await runner.query(`UPDATE "decisions"."decision_sessions" SET "token_hash" = encode(sha256(convert_to("token", 'UTF8')), 'hex')`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ALTER COLUMN "token_hash" SET NOT NULL`);

    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" ADD "session_id" text`);
    await runner.query(`UPDATE "decisions"."sign_in_codes" c SET "session_id" = s."id" FROM "decisions"."decision_sessions" s WHERE s."token" = c."session_token"`);
    await runner.query(`UPDATE "decisions"."sign_in_codes" SET "session_id" = "session_token" WHERE "session_token" = 'inbox'`);
    await runner.query(`DELETE FROM "decisions"."sign_in_codes" WHERE "session_id" IS NULL`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" ALTER COLUMN "session_id" SET NOT NULL`);
    await runner.query(`DROP INDEX "decisions"."IX_sign_in_codes_session"`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" DROP COLUMN "session_token"`);
    await runner.query(`CREATE INDEX "IX_sign_in_codes_session" ON "decisions"."sign_in_codes" ("session_id", "created_at")`);

    // The id's unique index becomes the primary key, the token's primary key the hash's unique index.
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP CONSTRAINT "PK_decision_sessions"`);
    await runner.query(`DROP INDEX "decisions"."UQ_decision_sessions_id"`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD CONSTRAINT "PK_decision_sessions" PRIMARY KEY ("id")`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "token"`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_decision_sessions_token_hash" ON "decisions"."decision_sessions" ("token_hash")`);
  }

  async down(runner: QueryRunner): Promise<void> {
    const [{ n }] = await runner.query(`SELECT count(*)::int AS n FROM "decisions"."decision_sessions"`);
    if (n > 0) {
      throw new Error(`${n} decision sessions keep only their token's hash: their tokens cannot be restored (end or delete them before reverting SessionTokensKeptAsHashes1766300000000)`);
    }
    await runner.query(`DELETE FROM "decisions"."sign_in_codes" WHERE "session_id" <> 'inbox'`);
    await runner.query(`DROP INDEX "decisions"."UQ_decision_sessions_token_hash"`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD "token" text NOT NULL`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP CONSTRAINT "PK_decision_sessions"`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD CONSTRAINT "PK_decision_sessions" PRIMARY KEY ("token")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_decision_sessions_id" ON "decisions"."decision_sessions" ("id")`);
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "token_hash", DROP COLUMN "token_nonce"`);

    await runner.query(`DROP INDEX "decisions"."IX_sign_in_codes_session"`);
    await runner.query(`ALTER TABLE "decisions"."sign_in_codes" RENAME COLUMN "session_id" TO "session_token"`);
    await runner.query(`CREATE INDEX "IX_sign_in_codes_session" ON "decisions"."sign_in_codes" ("session_token", "created_at")`);
  }
}
