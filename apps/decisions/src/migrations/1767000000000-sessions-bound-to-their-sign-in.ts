import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hash of the participant proof a session's sign-in handed to the browser that signed in
 * (ParticipantSteps): deciding, and every step after signing in, needs it, so that whoever else
 * holds the session token (the organisation did, to open it) cannot decide in the person's name.
 * Sessions signed in before have none and are decided as before.
 */
export class SessionsBoundToTheirSignIn1767000000000 implements MigrationInterface {
  name = 'SessionsBoundToTheirSignIn1767000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD COLUMN "participant_proof_hash" text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "participant_proof_hash"`);
  }
}
