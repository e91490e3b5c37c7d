import { createIndexConcurrently, dropIndexConcurrently } from '@dcr/persistence';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each application's due deliveries in the order they are due: the dispatcher claims every
 * application's earliest ones in turn (DeliveryDispatcher.claim), so that one application's
 * backlog, or receivers that hang, do not hold every other application's deliveries back. Built
 * concurrently, outside a transaction: deliveries go on being queued meanwhile.
 */
export class DeliveriesDueByApplication1767000000000 implements MigrationInterface {
  name = 'DeliveriesDueByApplication1767000000000';
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    await createIndexConcurrently(runner, 'webhooks', 'IX_deliveries_application_due', `"deliveries" ("application_id", "next_attempt_at") WHERE "status" = 'pending'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await dropIndexConcurrently(runner, 'webhooks', 'IX_deliveries_application_due');
  }
}
