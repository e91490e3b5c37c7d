import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';

/**
 * The error a new connection gets from a real PostgreSQL server that takes no more connections:
 * 53300 (too_many_connections), as `sorry, too many clients already` when `max_connections` is
 * reached (a loaded server, a pool opening its next connection under a burst). A server-wide limit a
 * test cannot lower, so it is met the way a role's limit is: a role of its own, made for the test
 * with `CONNECTION LIMIT 0` (not a superuser, whom no limit holds), tries to connect, and is dropped
 * again. `databaseUrl` names a database the test made for itself.
 */
export async function refusedConnectionError(databaseUrl: string): Promise<Error & { code?: string }> {
  const role = `t_refused_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE "${role}" LOGIN CONNECTION LIMIT 0`);
    const url = new URL(databaseUrl);
    url.username = role;
    url.password = '';
    const refused = new Client({ connectionString: url.toString() });
    return await refused.connect().then(
      async () => {
        await refused.end();
        return new Error('the connection was not refused');
      },
      (error: Error) => error,
    );
  } finally {
    await admin.query(`DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
    await admin.end();
  }
}

/**
 * The error a query gets from node-postgres's pool when no connection comes free within its
 * `connectionTimeoutMillis` (every connection busy under load): `timeout exceeded when trying to
 * connect`, with no code. Made by a real pool of one connection, held while a second is asked for.
 */
export async function poolTimeoutError(databaseUrl: string): Promise<Error & { code?: string }> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 50 });
  const held = await pool.connect();
  try {
    return await pool.connect().then(
      (second) => {
        second.release();
        return new Error('a second connection was given');
      },
      (error: Error) => error,
    );
  } finally {
    held.release();
    await pool.end();
  }
}
