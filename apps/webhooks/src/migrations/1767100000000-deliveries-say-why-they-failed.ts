import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why a delivery failed without being sent (its subscription was disabled when the event happened,
 * or before a retry was due): the organisation reads it in the delivery log, and replays the
 * delivery once the subscription is enabled again.
 */
export class DeliveriesSayWhyTheyFailed1767100000000 implements MigrationInterface {
  name = 'DeliveriesSayWhyTheyFailed1767100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."deliveries" ADD COLUMN "failure_reason" text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."deliveries" DROP COLUMN "failure_reason"`);
  }
}
