// The database a component benchmark runs against: a fresh database on DATABASE_URL's server when it
// is set (dropped afterwards), else an embedded PostgreSQL in a temporary folder, as `npm start` runs it.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { freePort } = require('./lib');
const { loadEmbeddedPostgres, withPostgresEnvironment } = require('../tools/dev/embedded-postgres-runtime');

async function benchDatabase(label) {
  if (process.env.DATABASE_URL) {
    const name = `dcr_bench_${label}_${crypto.randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      kind: 'server at DATABASE_URL',
      async close() {
        const dropper = new Client({ connectionString: process.env.DATABASE_URL });
        await dropper.connect();
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await dropper.end();
      },
    };
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dcr-bench-${label}-`));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const postgres = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'pg'),
    port,
    user: 'postgres',
    password: 'bench',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  await postgres.initialise();
  await withPostgresEnvironment(() => postgres.start());
  await postgres.createDatabase('dcr_bench');
  return {
    url: `postgres://postgres:bench@127.0.0.1:${port}/dcr_bench`,
    kind: 'embedded PostgreSQL (as npm start)',
    async close() {
      await postgres.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One built service in this process (in-process transport, as the embedded default runs it) on a
 * fresh bench database, with a client and `send(pattern, body)` to talk to it. `env` adds to (or
 * overrides) the development settings; `close()` stops everything and drops the database.
 */
async function startBenchService({ label, definition, environment, env = {} }) {
  const { loadConfig } = require('../libs/config/dist');
  const { countryContext, startService } = require('../libs/service-kit/dist');
  const { createTransportClient, InProcessBus } = require('../libs/transport/dist');
  const { firstValueFrom } = require('rxjs');
  const db = await benchDatabase(label);
  const bus = new InProcessBus();
  const config = loadConfig(environment, {
    COUNTRY: 'US',
    REGION: 'dev',
    DATABASE_URL: db.url,
    TRANSPORT: 'inprocess',
    SUBJECT_REF_KEY: crypto.randomBytes(32).toString('hex'),
    NODE_ENV: 'development',
    LOG_LEVEL: 'error',
    DB_POOL_SIZE: process.env.DB_POOL_SIZE ?? '3',
    ...env,
  });
  const service = await startService(countryContext(definition, config, { bus }));
  const client = createTransportClient('inprocess', { bus, prefix: 'us', timeoutMs: 60_000 });
  return {
    db,
    env: config,
    send: (pattern, body) => firstValueFrom(client.send(pattern, body)),
    async close() {
      await client.close();
      await service.close();
      await db.close();
    },
  };
}

module.exports = { benchDatabase, startBenchService };
