import { randomBytes } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { dropDatabase, ensureDatabase } from './ensure-database';
import { PreparedStatement } from './prepared-statement';

// CI's PostgreSQL (see .ci/run); a database of this file's own, so files run in parallel.
const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
server.pathname = `/t_prepared_${randomBytes(5).toString('hex')}`;
const url = server.toString();

describe('PreparedStatement (real PostgreSQL)', () => {
  const failures: Array<{ error: unknown; query: string }> = [];
  let dataSource: DataSource;

  beforeAll(async () => {
    await ensureDatabase(url);
    dataSource = new DataSource({
      type: 'postgres',
      url,
      poolSize: 1, // one connection, so that its prepared statements can be listed
      logger: {
        logQuery: () => undefined,
        logQueryError: (error, query) => void failures.push({ error, query }),
        logQuerySlow: () => undefined,
        logSchemaBuild: () => undefined,
        logMigration: () => undefined,
        log: () => undefined,
      },
    });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE items (id text PRIMARY KEY, n int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(url);
  });

  const insert = new PreparedStatement<{ id: string; n: number }>(
    'items_insert',
    'INSERT INTO items (id, n) VALUES ($1, $2) RETURNING id, n',
  );
  const bump = new PreparedStatement('items_bump', 'UPDATE items SET n = n + 1 WHERE n >= $1');

  it('answers the rows of RETURNING, with the columns it names only, parsed by their types', async () => {
    expect(await insert.rows(dataSource, ['a', 1])).toEqual([{ id: 'a', n: 1 }]);
    expect(await insert.rows(dataSource, ['b', 5])).toEqual([{ id: 'b', n: 5 }]);
  });

  it('answers how many rows a statement without RETURNING changed', async () => {
    expect(await bump.run(dataSource, [2])).toEqual({ rows: [], rowCount: 1 });
    expect((await dataSource.query('SELECT n FROM items WHERE id = $1', ['b']))[0].n).toBe(6);
  });

  it('is prepared once on the connection and reused', async () => {
    await insert.rows(dataSource, ['c', 3]);
    const prepared: Array<{ name: string; statement: string }> = await dataSource.query(
      'SELECT name, statement FROM pg_prepared_statements WHERE name LIKE $1 ORDER BY name',
      ['items_%'],
    );
    expect(prepared).toEqual([
      { name: 'items_bump', statement: bump.text },
      { name: 'items_insert', statement: insert.text },
    ]);
  });

  it('sends a statement that must be planned per call unnamed, so that no plan of it is kept', async () => {
    const byKeys = new PreparedStatement<{ id: string }>('items_by_keys', 'SELECT id FROM items WHERE id = ANY($1::text[]) ORDER BY id', { reusePlan: false });
    for (let i = 0; i < 7; i++) expect(await byKeys.rows(dataSource, [['a', 'b', 'zz']])).toEqual([{ id: 'a' }, { id: 'b' }]);
    const kept: unknown[] = await dataSource.query('SELECT name FROM pg_prepared_statements WHERE name = $1', ['items_by_keys']);
    expect(kept).toEqual([]);
  });

  it("runs inside a transaction on the transaction's connection: rolled back with it, and seeing its rows", async () => {
    const lock = new PreparedStatement<{ id: string }>('items_lock', 'SELECT id FROM items WHERE id = $1 FOR UPDATE SKIP LOCKED');
    await expect(
      dataSource.transaction(async (manager) => {
        await insert.rows(manager, ['tx', 7]);
        // Written by the same transaction, so visible to it (a pooled connection would wait for the
        // only connection, held here, and fail the test by its timeout).
        expect(await lock.rows(manager, ['tx'])).toEqual([{ id: 'tx' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await dataSource.query('SELECT id FROM items WHERE id = $1', ['tx'])).toEqual([]);
    // A manager outside any transaction runs on the pool.
    expect(await insert.rows(dataSource.manager, ['tx', 8])).toEqual([{ id: 'tx', n: 8 }]);
  });

  it('fails as TypeORM does: a QueryFailedError with the driver code, logged without its parameters', async () => {
    failures.length = 0;
    const failure = insert.rows(dataSource, ['a', 9]);
    await expect(failure).rejects.toBeInstanceOf(QueryFailedError);
    await expect(failure).rejects.toMatchObject({ code: '23505' });
    expect(failures).toHaveLength(1);
    expect(failures[0].query).toBe(insert.text);
    // The pool is still usable afterwards.
    expect(await insert.rows(dataSource, ['d', 4])).toEqual([{ id: 'd', n: 4 }]);
  });

  it('throws an error its caller expects without logging it, and logs any other', async () => {
    failures.length = 0;
    const guarded = new PreparedStatement('items_insert_guarded', 'INSERT INTO items (id, n) VALUES ($1, $2)', {
      expected: (error) => error.code === '23505' && error.constraint === 'items_pkey',
    });
    await expect(guarded.run(dataSource, ['a', 1])).rejects.toMatchObject({ code: '23505', constraint: 'items_pkey' });
    expect(failures).toHaveLength(0);
    await expect(guarded.run(dataSource, ['z', null])).rejects.toMatchObject({ code: '23502' });
    expect(failures).toHaveLength(1);
  });

  it('refuses a data source that is not initialised, and a name PostgreSQL would fold or refuse', async () => {
    const closed = new DataSource({ type: 'postgres', url });
    await expect(insert.rows(closed, ['e', 1])).rejects.toThrow('needs an initialised PostgreSQL data source');
    expect(() => new PreparedStatement('Items-Insert', 'SELECT 1')).toThrow('lower-case letters');
    // PostgreSQL would cut it to 63 bytes, where it could meet another name.
    expect(() => new PreparedStatement(`items_${'x'.repeat(58)}`, 'SELECT 1')).toThrow('at most 63 characters');
    expect(() => new PreparedStatement(`items_${'x'.repeat(57)}`, 'SELECT 1')).not.toThrow();
  });
});
