import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No statement reads receipts by their source event or by application: a receipt is read by its
 * record's id (the primary key), which is also what makes a redelivered event freeze nothing twice
 * (one receipt per record). The two indexes only cost every frozen receipt two index insertions
 * (docs/performance.md, twenty-first session). `down` builds them again.
 */
export class DropUnreadReceiptIndexes1765200000000 implements MigrationInterface {
  name = 'DropUnreadReceiptIndexes1765200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "receipts"."UQ_receipts_source_event"`);
    await runner.query(`DROP INDEX "receipts"."IX_receipts_application"`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE UNIQUE INDEX "UQ_receipts_source_event" ON "receipts"."receipts" ("source_event_id")`);
    await runner.query(`CREATE INDEX "IX_receipts_application" ON "receipts"."receipts" ("application_id", "frozen_at")`);
  }
}
