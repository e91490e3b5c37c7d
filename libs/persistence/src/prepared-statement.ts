import { DataSource, QueryFailedError } from 'typeorm';

/**
 * One statement of a hot path (a decision's creation, a consent token's verification, a recorded
 * consent), run as a named prepared statement on the connection pool TypeORM opened for the service.
 *
 * Why not `DataSource.query()`: that builds a query runner per call, broadcasts to subscribers and
 * sends the text to be parsed and planned again every time. Here PostgreSQL parses and plans the
 * statement once per connection (`pg` prepares a named statement on first use and reuses it), and
 * the call costs one pool checkout. The text is fixed when the statement is declared, so nothing
 * variable can reach it except as a parameter.
 *
 * Failures look the same as TypeORM's own: a `QueryFailedError` carrying the driver's error (its
 * `code`, e.g. `23505`), logged through the data source's logger (without parameters, see
 * ServiceQueryLogger).
 */
export class PreparedStatement<Row extends Record<string, unknown> = Record<string, unknown>> {
  constructor(
    /** Unique among the statements one service runs: PostgreSQL keys a connection's statements by name. */
    readonly name: string,
    readonly text: string,
  ) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`A prepared statement's name is lower-case letters, digits and "_" (${name})`);
  }

  /** The rows the statement returned (none for a statement without RETURNING). */
  async rows(dataSource: DataSource, values: unknown[]): Promise<Row[]> {
    return (await this.run(dataSource, values)).rows;
  }

  /** The rows and how many rows the statement affected. */
  async run(dataSource: DataSource, values: unknown[]): Promise<{ rows: Row[]; rowCount: number }> {
    const pool = poolOf(dataSource);
    try {
      const result = await pool.query({ name: this.name, text: this.text, values });
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      dataSource.logger.logQueryError(error as Error, this.text);
      throw new QueryFailedError(this.text, values, error as Error);
    }
  }
}

interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** The `pg` pool of a PostgreSQL data source (TypeORM's PostgresDriver keeps it as `master`). */
function poolOf(dataSource: DataSource): PgPool {
  const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
  if (!dataSource.isInitialized || !pool || typeof pool.query !== 'function') {
    throw new Error('A prepared statement needs an initialised PostgreSQL data source');
  }
  return pool;
}
