import { EntityMetadata } from 'typeorm';

/**
 * An entity from a raw row (database column names), for the few hot paths that send their SQL
 * through the driver directly instead of the query builder.
 */
export function entityFromRow<T extends object>(metadata: EntityMetadata, row: Record<string, unknown>, entity: T): T {
  for (const column of metadata.columns) {
    (entity as Record<string, unknown>)[column.propertyName] = row[column.databaseName];
  }
  return entity;
}
