import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person's records of one flow form one chain (each later record `supersedes` the newest one
 * before it): the database now refuses a fork itself, a second record superseding the same one.
 * So a batch that extends chains is written without locks (its statement fails when another writer
 * extended one of them meanwhile, and the batch goes through its transaction), and no writer,
 * whatever its path, can leave two records superseding one (docs/architecture.md, Record batches
 * and their chains). A record that supersedes nothing is a person's first of the flow (written by
 * the statement that makes a new person, or under the per-person locks, so there is one) or one
 * recorded late (decided before the newest record, ImportBatch.plan: it changes no chain's newest
 * record), so those are not constrained.
 *
 * Earlier versions could fork a chain (a record superseded twice when two were recorded in the same
 * millisecond, or by replicas whose clocks disagreed, or before the newest record was the one
 * decided last). Such records are evidence and are not rewritten here: the migration stops, naming
 * them, so that an operator reconciles them before the service starts with this version: each fork's
 * successors linked into one chain in the order they were recorded (deploy/README.md, Migrations,
 * gives the statement; withdrawing or re-recording a record leaves `supersedes` as it was, so it does
 * not end the stop).
 */
/**
 * The operator's reconciliation of the forks this migration stops on (deploy/README.md quotes it):
 * the successors of each record superseded more than once linked into one chain in the order they
 * were recorded, each superseding the one before it. No record is removed or changed but for that link.
 */
export const RECONCILE_FORKED_CHAINS_SQL = `UPDATE decisions.consent_records r SET supersedes = f.previous
  FROM (SELECT record_id, lag(record_id) OVER (PARTITION BY supersedes ORDER BY recorded_at, record_id) AS previous
          FROM decisions.consent_records WHERE supersedes IS NOT NULL) f
 WHERE r.record_id = f.record_id AND f.previous IS NOT NULL;`;

export class ConsentRecordChainsAreLinear1765500000000 implements MigrationInterface {
  name = 'ConsentRecordChainsAreLinear1765500000000';

  async up(runner: QueryRunner): Promise<void> {
    const forks: Array<{ supersedes: string; successors: string[] }> = await runner.query(
      `SELECT "supersedes", array_agg("record_id" ORDER BY "recorded_at") AS "successors" FROM "decisions"."consent_records"
        WHERE "supersedes" IS NOT NULL GROUP BY "supersedes" HAVING count(*) > 1 ORDER BY "supersedes" LIMIT 20`,
    );
    if (forks.length > 0) {
      const named = forks.map((fork) => `${fork.supersedes} superseded by ${fork.successors.join(' and ')}`).join('; ');
      throw new Error(`decisions.consent_records holds records superseded more than once (${named}${forks.length === 20 ? '; and maybe more' : ''}); reconcile them before this version starts`);
    }
    await runner.query(`CREATE UNIQUE INDEX "UQ_consent_records_successor" ON "decisions"."consent_records" ("supersedes") WHERE "supersedes" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."UQ_consent_records_successor"`);
  }
}
