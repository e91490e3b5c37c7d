import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

/**
 * One statement of a hot path (a decision's creation, a consent token's verification, a recorded
 * consent, the outbox relay), run as a named prepared statement: on the connection pool TypeORM
 * opened for the service, or, given a transaction's EntityManager, on that transaction's connection.
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
  private readonly sentName: string | undefined;
  private readonly expected?: (error: { code?: string; constraint?: string }) => boolean;

  constructor(
    /** Unique among the statements one service runs: PostgreSQL keys a connection's statements by name. */
    readonly name: string,
    readonly text: string,
    options: {
      /**
       * false: send the statement unnamed, so that PostgreSQL plans it for the values of each call.
       * For statements whose best plan depends on the values or on a table's size: a lookup by an
       * array of keys (`= ANY($1)`), a queue that starts empty. A named statement's plan becomes a
       * generic one after five calls and is kept on the connection; chosen while a table was small,
       * it scans the whole table for as long as it lasts (seen on the residency directory: the lookup
       * read the table through for every batch until autovacuum analysed it). Default true: for
       * lookups and updates by a primary key, the generic plan is the index's at any size.
       */
      reusePlan?: boolean;
      /**
       * Errors the caller expects and handles (e.g. a unique violation that sends a batch another
       * way): thrown as any other, but not logged as a failed query.
       */
      expected?: (error: { code?: string; constraint?: string }) => boolean;
    } = {},
  ) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`A prepared statement's name is lower-case letters, digits and "_" (${name})`);
    // PostgreSQL cuts a longer name to 63 bytes (NAMEDATALEN), so two names alike that far would be one statement.
    if (name.length > 63) throw new Error(`A prepared statement's name is at most 63 characters (${name}: ${name.length})`);
    this.sentName = options.reusePlan === false ? undefined : name;
    this.expected = options.expected;
  }

  /** The rows the statement returned (none for a statement without RETURNING). */
  async rows(on: DataSource | EntityManager, values: unknown[]): Promise<Row[]> {
    return (await this.run(on, values)).rows;
  }

  /**
   * The rows and how many rows the statement affected. `on` is the data source (any pooled
   * connection) or an EntityManager: a transaction's runs it on the transaction's connection.
   */
  async run(on: DataSource | EntityManager, values: unknown[]): Promise<{ rows: Row[]; rowCount: number }> {
    const dataSource = on instanceof DataSource ? on : on.connection;
    try {
      const connection = await connectionOf(on);
      const result = await connection.query(this.sentName ? { name: this.sentName, text: this.text, values } : { text: this.text, values });
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      if (error instanceof NotPostgres) throw error;
      if (!this.expected?.(error as { code?: string; constraint?: string })) dataSource.logger.logQueryError(error as Error, this.text);
      throw new QueryFailedError(this.text, values, error as Error);
    }
  }
}

/** `pg`'s Pool and Client both take a named statement as `{ name, text, values }`. */
interface PgQueryable {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

class NotPostgres extends Error {}

/**
 * Where the statement runs: a transaction's own connection (its query runner's `pg` client), else
 * the `pg` pool of the PostgreSQL data source (TypeORM's PostgresDriver keeps it as `master`).
 */
async function connectionOf(on: DataSource | EntityManager): Promise<PgQueryable> {
  if (!(on instanceof DataSource) && on.queryRunner && !on.queryRunner.isReleased) {
    return (await on.queryRunner.connect()) as PgQueryable;
  }
  const dataSource = on instanceof DataSource ? on : on.connection;
  const pool = (dataSource.driver as unknown as { master?: PgQueryable }).master;
  if (!dataSource.isInitialized || !pool || typeof pool.query !== 'function') {
    throw new NotPostgres('A prepared statement needs an initialised PostgreSQL data source');
  }
  return pool;
}
