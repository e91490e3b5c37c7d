import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Subscriptions are in force in every country (SubscriptionReplicator): each change bumps
 * `revision`, which orders a subscription's changes when peers exchange them.
 */
export class SubscriptionsReplicated1765800000000 implements MigrationInterface {
  name = 'SubscriptionsReplicated1765800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" ADD COLUMN "revision" integer NOT NULL DEFAULT 1`);
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" ADD CONSTRAINT "CK_subscriptions_revision" CHECK ("revision" >= 1)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" DROP CONSTRAINT "CK_subscriptions_revision"`);
    await runner.query(`ALTER TABLE "webhooks"."subscriptions" DROP COLUMN "revision"`);
  }
}
