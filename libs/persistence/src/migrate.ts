import { DataSource } from 'typeorm';

/**
 * Brings a service's schema up to date: creates the schema (its migrations table lives inside it),
 * then runs pending migrations, each in its own transaction. A session-level advisory lock keyed by
 * the schema name makes concurrent starts of the same service wait for each other instead of racing.
 * A release older than the schema (the schema holds migrations this release does not have: its image
 * was rolled back, or an older build started on the data of a newer one) refuses to start, naming
 * them: migrations are forward-only, and an older release would start and then fail on every table a
 * newer migration changed.
 */
export async function migrateServiceSchema(dataSource: DataSource): Promise<string[]> {
  const schema = schemaOf(dataSource);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`dcr:migrate:${schema}`]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await refuseNewerSchema(dataSource, schema);
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`dcr:migrate:${schema}`]);
    }
  } finally {
    await runner.release();
  }
}

/** Throws, naming them, when the schema records migrations this release does not have. */
async function refuseNewerSchema(dataSource: DataSource, schema: string): Promise<void> {
  const [{ table }] = await dataSource.query(`SELECT to_regclass($1) AS "table"`, [`"${schema}"."migrations"`]);
  if (table === null) return;
  // TypeORM records a migration under its `name`, else its class name (MigrationExecutor.getMigrations).
  const known = new Set(dataSource.migrations.map((migration) => migration.name || migration.constructor.name));
  const applied: Array<{ name: string }> = await dataSource.query(`SELECT "name" FROM "${schema}"."migrations" ORDER BY "timestamp", "id"`);
  const unknown = applied.map((row) => row.name).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `The schema "${schema}" was migrated by a newer release (${unknown.join(', ')}) than this one; migrations are forward-only, so start that release ` +
        'again, or restore the backup taken before the upgrade to run this one',
    );
  }
}

/**
 * The SQL TypeORM would run to make the database match the entities. After all migrations have run
 * it must be empty; a test per service asserts that, so entities and migrations cannot drift apart.
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((query) => query.query);
}

function schemaOf(dataSource: DataSource): string {
  const schema = (dataSource.options as { schema?: string }).schema;
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new Error(`A service data source needs a lower-case schema name, got ${String(schema)}`);
  }
  return schema;
}
