import { MigrationInterface, QueryRunner } from 'typeorm';

/** When a hosted decision page showed the flow's notice, for the receipt's `notice shown` event. */
export class SessionsRecordNoticeShown1765900000000 implements MigrationInterface {
  name = 'SessionsRecordNoticeShown1765900000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" ADD COLUMN "notice_shown_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."decision_sessions" DROP COLUMN "notice_shown_at"`);
  }
}
