import type { DataSource, EntityMetadata } from 'typeorm';

/**
 * Rows sent to PostgreSQL as one JSON document, read back with `jsonb_to_recordset($n::jsonb) AS
 * r(<columns>)`: the statement's text is the same for one row or a hundred (so it is prepared once),
 * and nothing is escaped into an array literal on the way (the `pg` driver's array escaping of JSON
 * text was a visible cost on the batch paths).
 *
 * Each row is an object with every field (a Date becomes its ISO text, a jsonb value its JSON), and
 * the column list of the statement is kept beside the fields it must match.
 */
export class JsonRecordset<T> {
  constructor(
    private readonly fields: ReadonlyArray<{ key: string; read: (row: T) => unknown; type?: string }>,
    /** The `AS r(...)` column list: each key with its PostgreSQL type. */
    readonly columns = fields.map((field) => `"${field.key}" ${field.type ?? 'text'}`).join(', '),
  ) {
    if (fields.length === 0) throw new Error('A recordset needs at least one field');
  }

  /** The rows as a JSON array of objects, one key per field (null for a missing value). */
  document(rows: readonly T[]): string {
    return JSON.stringify(
      rows.map((row) => {
        const object: Record<string, unknown> = {};
        for (const field of this.fields) object[field.key] = field.read(row) ?? null;
        return object;
      }),
    );
  }
}

/**
 * The recordset of an entity's columns: keys are the column names, values the entity's properties,
 * types as the driver names them for this column (`normalizeType`).
 */
export function entityRecordset<T extends object>(dataSource: DataSource, metadata: EntityMetadata): JsonRecordset<T> {
  return new JsonRecordset<T>(
    metadata.columns.map((column) => ({
      key: column.databaseName,
      read: (row: T) => (row as Record<string, unknown>)[column.propertyName],
      type: dataSource.driver.normalizeType(column),
    })),
  );
}
