import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The migration `OutboxDeletesRelayedRows1765000000000` of a service with an outbox (gateway,
 * decisions, webhooks), for its schema: the outbox no longer keeps relayed rows (OutboxRelay deletes
 * them), so the `published_at` mark goes, the rows already relayed go (their events are on the audit
 * trail, which is where they are kept), and the claim's index covers the whole table. `down` restores
 * the schema only: the deleted rows are on the trail, not brought back.
 */
export function outboxDeletesRelayedRows(schema: string): new () => MigrationInterface {
  return class OutboxDeletesRelayedRows1765000000000 implements MigrationInterface {
    name = 'OutboxDeletesRelayedRows1765000000000';

    async up(runner: QueryRunner): Promise<void> {
      await runner.query(`DELETE FROM "${schema}"."outbox" WHERE "published_at" IS NOT NULL`);
      await runner.query(`DROP INDEX "${schema}"."IX_outbox_unpublished"`);
      await runner.query(`ALTER TABLE "${schema}"."outbox" DROP COLUMN "published_at"`);
      await runner.query(`CREATE INDEX "IX_outbox_occurred_at" ON "${schema}"."outbox" ("occurred_at")`);
    }

    async down(runner: QueryRunner): Promise<void> {
      await runner.query(`DROP INDEX "${schema}"."IX_outbox_occurred_at"`);
      await runner.query(`ALTER TABLE "${schema}"."outbox" ADD COLUMN "published_at" TIMESTAMP WITH TIME ZONE`);
      await runner.query(`CREATE INDEX "IX_outbox_unpublished" ON "${schema}"."outbox" ("occurred_at") WHERE "published_at" IS NULL`);
    }
  };
}
