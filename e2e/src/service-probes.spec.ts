import { Client } from 'pg';
import { createTestDatabase, testNatsUrl, TestDatabase, uniquePrefix } from '@dcr/testing';
import { randomSecret } from '../support/country-harness';
import { freePort, launch, Launched } from '../support/processes';

/**
 * A service without HTTP of its own (every one but the gateway), run as its own process with
 * HEALTH_PORT, answers its probes there: the chart's liveness and readiness probes call them.
 */
describe('probes of a service in its own process (HEALTH_PORT)', () => {
  let database: TestDatabase;
  let service: Launched | undefined;
  const env = (extra: Record<string, string>) => ({
    COUNTRY: 'US',
    REGION: 'dev',
    DATABASE_URL: database.url,
    TRANSPORT: 'nats',
    NATS_URL: testNatsUrl(),
    SUBJECT_NAMESPACE: uniquePrefix('probe'),
    SUBJECT_REF_KEY: randomSecret(),
    NODE_ENV: 'test',
    DB_POOL_SIZE: '2',
    ...extra,
  });
  const admin = async <T>(work: (client: Client) => Promise<T>): Promise<T> => {
    const url = new URL(database.url);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const name = () => new URL(database.url).pathname.slice(1);

  beforeAll(async () => {
    database = await createTestDatabase('probes');
  });

  afterAll(async () => {
    await service?.stop();
    await admin((client) => client.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS true`));
    await database.drop();
  });

  it('answers /healthz while alive, /readyz 200 only while its database answers and its transport is connected, and stops on SIGTERM', async () => {
    const port = await freePort();
    service = launch('apps/residency-router/dist/main.js', env({ HEALTH_PORT: String(port) }));
    await service.waitForOutput('probes on /healthz and /readyz', 60_000);
    const get = async (path: string, method = 'GET') => {
      const answer = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      return { status: answer.status, body: method === 'HEAD' ? null : await answer.json() };
    };
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', transport: 'ok' } } });
    expect((await get('/metrics')).status).toBe(404);
    expect((await get('/readyz', 'POST')).status).toBe(405);

    // The database refuses connections and drops the service's: not ready, still alive.
    await admin(async (client) => {
      await client.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS false`);
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name()]);
    });
    expect(await get('/readyz')).toEqual({ status: 503, body: { status: 'not_ready', checks: { database: 'failed', transport: 'ok' } } });
    expect((await get('/healthz')).status).toBe(200);
    await admin((client) => client.query(`ALTER DATABASE "${name()}" ALLOW_CONNECTIONS true`));
    expect((await get('/readyz')).status).toBe(200);

    expect(await service.stop('SIGTERM')).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('refuses a HEALTH_PORT that is no port, naming it, before it starts', async () => {
    const refused = launch('apps/residency-router/dist/main.js', env({ HEALTH_PORT: '70000' }));
    expect(await refused.stop('SIGCONT')).toBe(1);
    expect(refused.output()).toContain('HEALTH_PORT must be between 1 and 65535');
  });
});
