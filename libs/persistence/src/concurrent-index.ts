import type { QueryRunner } from 'typeorm';

/**
 * Index changes for migrations on tables that may already be large in production (a country's
 * consent records): built and dropped `CONCURRENTLY`, so the service's writes go on while an
 * upgrade builds the index (a plain `CREATE INDEX` holds a lock that stops every insert into the
 * table until the build ends). `CONCURRENTLY` cannot run in a transaction, so a migration using
 * these sets `transaction = false` (TypeORM then runs it outside one). A build interrupted before
 * (the process stopped mid-upgrade) leaves an invalid index of that name, which is dropped and built
 * again; a valid one is kept, so the migration can run again after it stopped anywhere.
 */
export async function createIndexConcurrently(runner: QueryRunner, schema: string, name: string, definition: string): Promise<void> {
  const [existing] = await runner.query(
    `SELECT i."indisvalid" AS "valid" FROM pg_index i JOIN pg_class c ON c.oid = i."indexrelid" JOIN pg_namespace n ON n.oid = c."relnamespace"
      WHERE n."nspname" = $1 AND c."relname" = $2`,
    [schema, name],
  );
  if (existing?.valid === true) return;
  if (existing) await runner.query(`DROP INDEX CONCURRENTLY "${schema}"."${name}"`);
  await runner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "${schema}".${definition}`);
}

/** Drops an index without stopping writes to its table (see createIndexConcurrently); none of that name is fine. */
export async function dropIndexConcurrently(runner: QueryRunner, schema: string, name: string): Promise<void> {
  await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS "${schema}"."${name}"`);
}
