import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated secret goes on signing beside the new one for a day (`previous_secret_sealed` until
 * `previous_secret_until`), so a receiver that still has the old secret loses no delivery while it
 * switches over.
 */
export class SubscriptionsPreviousSecret1766000000000 implements MigrationInterface {
  name = 'SubscriptionsPreviousSecret1766000000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" ADD COLUMN "previous_secret_sealed" text, ADD COLUMN "previous_secret_until" timestamptz`);
    await runner.query(
      `ALTER TABLE "webhooks"."subscriptions" ADD CONSTRAINT "CK_subscriptions_previous_secret" CHECK (("previous_secret_sealed" IS NULL) = ("previous_secret_until" IS NULL))`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" DROP CONSTRAINT "CK_subscriptions_previous_secret"`);
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" DROP COLUMN "previous_secret_until", DROP COLUMN "previous_secret_sealed"`);
  }
}
