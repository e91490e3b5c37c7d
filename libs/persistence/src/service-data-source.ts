import { DataSource, MixedList, EntitySchema } from 'typeorm';
import { QueryLogSink, ServiceQueryLogger } from './query-logger';

export interface ServiceDatabaseOptions {
  /** The country's database. */
  url: string;
  /** The schema this service owns; no other service reads or writes it. */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
  poolSize?: number;
  /** Shown in pg_stat_activity, e.g. `us/gateway`. */
  applicationName?: string;
  /** The service's logger: failed queries are logged there without their parameters (ServiceQueryLogger). */
  log?: QueryLogSink;
}

/** Connections a service's pool holds when its configuration names no size. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * How many batches of one kind (a CallBatcher's `maxConcurrent`) may be at the database at once: one
 * connection fewer than the data source's pool, so that a busy kind always leaves one to the rest.
 */
export function batchesAtOnce(dataSource: DataSource): number {
  const poolSize = (dataSource.options as { poolSize?: number }).poolSize ?? DEFAULT_POOL_SIZE;
  return Math.max(1, poolSize - 1);
}

/**
 * The TypeORM data source of one service in one country. Never `synchronize`: the schema changes
 * only through the service's migrations, recorded in `<schema>.migrations`.
 */
export function createServiceDataSource(options: ServiceDatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
    // A request that cannot get a connection fails after 10 s instead of waiting for ever.
    extra: { connectionTimeoutMillis: 10_000 },
    applicationName: options.applicationName,
    ...(options.log ? { logger: new ServiceQueryLogger(options.log) } : { logging: ['error'] as const }),
  });
}
