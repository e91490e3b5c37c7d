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
    poolSize: options.poolSize ?? 10,
    // A request that cannot get a connection fails after 10 s instead of waiting for ever.
    extra: { connectionTimeoutMillis: 10_000 },
    applicationName: options.applicationName,
    ...(options.log ? { logger: new ServiceQueryLogger(options.log) } : { logging: ['error'] as const }),
  });
}
