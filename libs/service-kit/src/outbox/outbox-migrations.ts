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

/**
 * The relay takes rows in the order of their ids, which start with the time the event was made
 * (newEventId), through the primary key: the index on `occurred_at` goes, one index insertion fewer
 * for every event (docs/performance.md, twenty-first session). Rows written before this migration
 * have random ids and are relayed in no particular order among the new ones, once.
 */
export function outboxRelaysByEventId(schema: string): new () => MigrationInterface {
  return class OutboxRelaysByEventId1765300000000 implements MigrationInterface {
    name = 'OutboxRelaysByEventId1765300000000';

    async up(runner: QueryRunner): Promise<void> {
      await runner.query(`DROP INDEX "${schema}"."IX_outbox_occurred_at"`);
    }

    async down(runner: QueryRunner): Promise<void> {
      await runner.query(`CREATE INDEX "IX_outbox_occurred_at" ON "${schema}"."outbox" ("occurred_at")`);
    }
  };
}
