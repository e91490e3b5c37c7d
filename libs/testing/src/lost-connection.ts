import { Client } from 'pg';

/**
 * The error a query gets from a real PostgreSQL server when its connection is terminated under it
 * (`pg_terminate_backend`, as an operator or a failover does): 57P01, "terminating connection due
 * to administrator command". `databaseUrl` names a database the test made for itself.
 */
export async function lostConnectionError(databaseUrl: string): Promise<Error & { code?: string }> {
  const victim = new Client({ connectionString: databaseUrl });
  const operator = new Client({ connectionString: databaseUrl });
  await victim.connect();
  await operator.connect();
  victim.on('error', () => undefined);
  try {
    const pid = (await victim.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const inFlight = victim.query('SELECT pg_sleep(30)').then(
      () => new Error('the query was not terminated'),
      (error: Error) => error,
    );
    // The sleep may not have reached the server yet: terminate it once it is running.
    const terminate = 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND state = $2';
    while ((await operator.query(terminate, [pid, 'active'])).rowCount === 0);
    return await inFlight;
  } finally {
    await operator.end();
    await victim.end().catch(() => undefined);
  }
}
