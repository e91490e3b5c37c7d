import { createIndexConcurrently, dropIndexConcurrently } from '@dcr/persistence';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions that ended without a decision (expired or cancelled, no outcome) keep their person's
 * address and external id only 30 days (RetentionSweep): this index finds those still holding one,
 * by when they ended, so the hourly sweep reads them and not the whole table. Built concurrently,
 * outside a transaction: a country upgrading keeps opening sessions meanwhile.
 */
export class EndedSessionsForgetTheirPerson1766900000000 implements MigrationInterface {
  name = 'EndedSessionsForgetTheirPerson1766900000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      runner,
      'decisions',
      'IX_decision_sessions_ended_person',
      `"decision_sessions" ("updated_at") WHERE "status" = 'expired' AND "outcome" IS NULL AND ("subject_email" IS NOT NULL OR "subject_external_id" IS NOT NULL)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await dropIndexConcurrently(runner, 'decisions', 'IX_decision_sessions_ended_person');
  }
}
