import { DataSource } from 'typeorm';

/**
 * Brings a service's schema up to date: creates the schema (its migrations table lives inside it),
 * then runs pending migrations, each in its own transaction. A session-level advisory lock keyed by
 * the schema name makes concurrent starts of the same service wait for each other instead of racing.
 */
export async function migrateServiceSchema(dataSource: DataSource): Promise<string[]> {
  const schema = schemaOf(dataSource);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`dcr:migrate:${schema}`]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`dcr:migrate:${schema}`]);
    }
  } finally {
    await runner.release();
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
