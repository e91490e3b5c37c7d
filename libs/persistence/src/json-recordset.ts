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
  /** Each field's `"key":` with the separator before it, made once. */
  private readonly heads: string[];
  private readonly reads: Array<(row: T) => unknown>;

  constructor(
    fields: ReadonlyArray<{ key: string; read: (row: T) => unknown; type?: string }>,
    /** The `AS r(...)` column list: each key with its PostgreSQL type. */
    readonly columns = fields.map((field) => `"${field.key}" ${field.type ?? 'text'}`).join(', '),
  ) {
    if (fields.length === 0) throw new Error('A recordset needs at least one field');
    this.heads = fields.map((field, index) => `${index === 0 ? '{' : ','}${JSON.stringify(field.key)}:`);
    this.reads = fields.map((field) => field.read);
  }

  /**
   * The rows as a JSON array of objects, one key per field (null for a missing value): the text
   * `JSON.stringify` makes of such objects, written field by field instead of building an object per
   * row first (that was about 6 % of the service's busy time at create saturation, mostly the objects
   * and their dates' `toJSON`; docs/performance.md, twenty-fourth session).
   */
  document(rows: readonly T[]): string {
    const { heads, reads } = this;
    let text = '[';
    for (let index = 0; index < rows.length; index++) {
      if (index > 0) text += ',';
      const row = rows[index];
      for (let field = 0; field < heads.length; field++) text += heads[field] + jsonValue(reads[field](row));
      text += '}';
    }
    return `${text}]`;
  }
}

/** One value as `JSON.stringify` writes it as a property's value (undefined and null: null). */
function jsonValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  // A date as its own toJSON writes it (ISO text; null for an invalid one), without the generic call.
  if (value instanceof Date && value.toJSON === Date.prototype.toJSON) return Number.isNaN(value.getTime()) ? 'null' : `"${value.toISOString()}"`;
  return JSON.stringify(value) ?? 'null';
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
