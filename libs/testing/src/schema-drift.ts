import { createServiceDataSource, migrateServiceSchema, pendingSchemaChanges } from '@dcr/persistence';
import type { DataSource } from 'typeorm';
import { createTestDatabase } from './test-database';

export interface SchemaOwner {
  name: string;
  schema: string;
  entities: Function[];
  migrations: Function[];
}

export interface SchemaCheck {
  /** Migrations applied to an empty database. */
  applied: string[];
  /** SQL TypeORM would still run to match the entities after every migration ran; must be empty. */
  pendingAfterMigrations: string[];
  /** Tables left in the schema after every migration was reverted; must be empty. */
  tablesAfterRevert: string[];
}

/**
 * Runs a service's migrations on an empty database of its own, asks TypeORM what would still be
 * needed to match the entities, then reverts every migration. A service test asserts that nothing
 * is pending and nothing is left, so entities and migrations cannot drift apart.
 */
export async function checkServiceSchema(owner: SchemaOwner): Promise<SchemaCheck> {
  const { dataSource, applied, close } = await migratedServiceDatabase(owner, `schema_${owner.schema}`);
  try {
    const pendingAfterMigrations = await pendingSchemaChanges(dataSource);
    // TypeORM reverts a migration in a transaction unless told not to, whatever the migration says:
    // one that runs outside a transaction (`transaction = false`, e.g. an index built concurrently)
    // is reverted outside one too.
    const byName = new Map(dataSource.migrations.map((migration) => [migration.name || migration.constructor.name, migration]));
    for (const name of [...applied].reverse()) {
      await dataSource.undoLastMigration({ transaction: byName.get(name)?.transaction === false ? 'none' : 'each' });
    }
    const tables = await dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'migrations'`,
      [owner.schema],
    );
    return { applied, pendingAfterMigrations, tablesAfterRevert: tables.map((t: { table_name: string }) => t.table_name) };
  } finally {
    await close();
  }
}

/** The schema test every service runs (in its own `test/schema.spec.ts`). */
export function describeServiceSchema(owner: SchemaOwner): void {
  describe(`${owner.name} schema`, () => {
    it('matches its entities after its migrations, and reverts cleanly', async () => {
      const check = await checkServiceSchema(owner);
      expect(check.applied).toHaveLength(owner.migrations.length);
      expect(check.pendingAfterMigrations).toEqual([]);
      expect(check.tablesAfterRevert).toEqual([]);
    });
  });
}

/** A service's schema, migrated, in a database of its own: a data source and a way to drop both. */
export interface MigratedServiceDatabase {
  dataSource: DataSource;
  /** The migrations that ran, by name. */
  applied: string[];
  close(): Promise<void>;
}

/**
 * For tests of a service's repositories against the real PostgreSQL: a new database, the service's
 * data source on it (`poolSize` connections, enough for the concurrency the test needs) and every
 * migration run, as the service itself starts.
 */
export async function migratedServiceDatabase(owner: SchemaOwner, label: string, poolSize = 2): Promise<MigratedServiceDatabase> {
  const database = await createTestDatabase(label);
  const dataSource = createServiceDataSource({ url: database.url, schema: owner.schema, entities: owner.entities, migrations: owner.migrations, poolSize });
  let applied: string[];
  try {
    await dataSource.initialize();
    applied = await migrateServiceSchema(dataSource);
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.drop();
    throw error;
  }
  return {
    dataSource,
    applied,
    async close() {
      await dataSource.destroy();
      await database.drop();
    },
  };
}
