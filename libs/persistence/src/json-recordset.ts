import type { DataSource, EntityMetadata } from 'typeorm';

/**
 * Rows sent to PostgreSQL as one JSON document, read back with `jsonb_to_recordset($n::jsonb) AS
 * r(<columns>)`: the statement's text is the same for one row or a hundred (so it is prepared once),
 * and nothing is escaped into an array literal on the way (the `pg` driver's array escaping of JSON
 * text was a visible cost on the batch paths).
 *
 * The document is written field by field from a fixed list: the same JSON as stringifying an
 * object per row with every field (`null` for a missing value, each value as JSON.stringify writes
 * it, so a Date becomes its ISO text and a jsonb value its JSON), about as fast, and with the column
 * list for the statement kept beside the fields it must match.
 */
export class JsonRecordset<T> {
  private readonly prefixes: string[];
  private readonly reads: Array<(row: T) => unknown>;

  constructor(
    fields: ReadonlyArray<{ key: string; read: (row: T) => unknown; type?: string }>,
    /** The `AS r(...)` column list: each key with its PostgreSQL type. */
    readonly columns = fields.map((field) => `"${field.key}" ${field.type ?? 'text'}`).join(', '),
  ) {
    if (fields.length === 0) throw new Error('A recordset needs at least one field');
    this.prefixes = fields.map((field, index) => `${index === 0 ? '' : ','}${JSON.stringify(field.key)}:`);
    this.reads = fields.map((field) => field.read);
  }

  /** The rows as a JSON array of objects, one key per field. */
  document(rows: readonly T[]): string {
    const { prefixes, reads } = this;
    let text = '[';
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      text += r === 0 ? '{' : ',{';
      for (let f = 0; f < prefixes.length; f++) {
        const value = reads[f](row);
        // undefined, a function or a symbol: JSON.stringify gives undefined; the field is null, as
        // a missing key is to jsonb_to_recordset.
        const json = value === null || value === undefined ? 'null' : JSON.stringify(value);
        text += prefixes[f] + (json === undefined ? 'null' : json);
      }
      text += '}';
    }
    return text + ']';
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
