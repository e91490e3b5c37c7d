import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person's records of one flow form one chain (each later record `supersedes` the newest one
 * before it): the database now refuses a fork itself, a second record superseding the same one.
 * So a batch that extends chains is written without locks (its statement fails when another writer
 * extended one of them meanwhile, and the batch goes through its transaction), and no writer,
 * whatever its path, can leave two records superseding one (docs/architecture.md, Record batches
 * and their chains). A record that supersedes nothing is a person's first of the flow (written
 * under the per-person locks, so there is one) or one recorded late (decided before the newest
 * record, ImportBatch.plan: it changes no chain's newest record), so those are not constrained. A
 * database already holding a fork fails here with PostgreSQL's unique violation naming the record.
 */
export class ConsentRecordChainsAreLinear1765500000000 implements MigrationInterface {
  name = 'ConsentRecordChainsAreLinear1765500000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE UNIQUE INDEX "UQ_consent_records_successor" ON "decisions"."consent_records" ("supersedes") WHERE "supersedes" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."UQ_consent_records_successor"`);
  }
}
