#!/usr/bin/env node
// `npm run start:distributed`: every service of US and DE as its own process, against the real
// PostgreSQL server named by DATABASE_URL (databases <name>_us and <name>_de, created when missing)
// and the real NATS server named by NATS_URL. Seeds like `npm start`, prints both endpoints, writes
// .data/dev-credentials.json, and stops every child on SIGTERM/SIGINT.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { countryDatabaseUrl, ensureDatabase } = require('@dcr/persistence');
const { GATEWAY_MEMORY_NODE_FLAGS, MEMORY_NODE_FLAGS } = require('@dcr/service-kit');
const { DATA_DIR, loadOrCreateSecrets, newAdminToken } = require('./local-secrets');
const { seedDevelopment, printEndpoints, shownPath, waitFor } = require('./seed');

const COUNTRIES = ['US', 'DE'];
const SERVICES = ['residency-router', 'decisions', 'receipts', 'audit-chain', 'webhooks', 'oidc', 'mcp-gateway', 'gateway'];
const DEFAULT_PORTS = { US: 3001, DE: 3002 };
const ROOT = path.resolve(__dirname, '../..');
// The gateway takes every request: a larger young generation means fewer scavenges under load
// (see docs/performance.md). The other services keep Node's default, which idles smaller.
// Every service: the memory flags of reclaimMemoryWhenIdle (collections asked for once quiet, and the
// maps of optimised code kept through them; see MEMORY_NODE_FLAGS); the gateway asks for none
// (GATEWAY_MEMORY_NODE_FLAGS).
const NODE_FLAGS = [...MEMORY_NODE_FLAGS];
const GATEWAY_NODE_FLAGS = [...GATEWAY_MEMORY_NODE_FLAGS, '--max-semi-space-size=64'];

// How long each country may take to answer /readyz: sixteen Node.js processes starting at once on a
// small, busy machine took over a minute (START_READY_TIMEOUT_S overrides it). A service that exits
// meanwhile stops the start at once, so the wait is only ever spent on a slow start.
const DEFAULT_READY_TIMEOUT_S = 180;

function readyTimeoutMs() {
  const given = process.env.START_READY_TIMEOUT_S;
  if (given === undefined || given === '') return DEFAULT_READY_TIMEOUT_S * 1000;
  const seconds = Number(given);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    process.stderr.write(`START_READY_TIMEOUT_S must be a whole number of seconds from 1 to 3600 (got ${JSON.stringify(given)})\n`);
    process.exit(1);
  }
  return seconds * 1000;
}

function required(name) {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`${name} must be set for the distributed mode (see README)\n`);
    process.exit(1);
  }
  return value;
}

// The service processes started so far: stopped with the launcher, also when its start fails (a
// country not ready in time, a seed refused), so that no service is left holding its port.
const children = [];
let stopping = false;

/** Whether a child is still running: one killed by a signal has no exit code, only its signal. */
const running = (child) => child.exitCode === null && child.signalCode === null;

function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (running(child)) child.kill('SIGTERM');
  const deadline = setTimeout(() => process.exit(code), 10000);
  deadline.unref();
  Promise.all(children.map((child) => (running(child) ? new Promise((r) => child.once('exit', r)) : null))).then(() =>
    process.exit(code),
  );
}

async function main() {
  const databaseUrl = required('DATABASE_URL');
  const natsUrl = required('NATS_URL');
  const readyWithinMs = readyTimeoutMs();
  const started = Date.now();
  const secrets = loadOrCreateSecrets();
  const adminToken = newAdminToken();
  const logDir = path.join(DATA_DIR, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const endpoints = {};
  process.once('SIGINT', () => stop(0));
  process.once('SIGTERM', () => stop(0));

  for (const country of COUNTRIES) {
    const countryUrl = countryDatabaseUrl(databaseUrl, country);
    await ensureDatabase(countryUrl);
    const port = Number(process.env[`${country}_PORT`]) || DEFAULT_PORTS[country];
    endpoints[country] = `http://127.0.0.1:${port}`;
    for (const service of SERVICES) {
      const log = fs.openSync(path.join(logDir, `${country.toLowerCase()}-${service}.log`), 'a');
      const flags = service === 'gateway' ? GATEWAY_NODE_FLAGS : NODE_FLAGS;
      const child = spawn(process.execPath, [...flags, path.join(ROOT, 'apps', service, 'dist', 'main.js')], {
        env: {
          ...process.env,
          COUNTRY: country,
          REGION: process.env.REGION ?? 'dev',
          DATABASE_URL: countryUrl,
          NATS_URL: natsUrl,
          TRANSPORT: 'nats',
          PEER_COUNTRIES: COUNTRIES.filter((c) => c !== country).join(','),
          SUBJECT_REF_KEY: secrets.subject_ref_key,
          RECEIPT_SIGNING_KEY: JSON.stringify(secrets.receipt_signing_keys[country]),
          NODE_ENV: process.env.NODE_ENV ?? 'development',
          DB_POOL_SIZE: process.env.DB_POOL_SIZE ?? '5',
          ...(service === 'gateway' ? { PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN: adminToken } : {}),
          // Links in mails and receipts name the endpoint this country answers on.
          PUBLIC_BASE_URL: process.env[`${country}_PUBLIC_BASE_URL`] ?? `http://127.0.0.1:${port}`,
        },
        stdio: ['ignore', log, log],
      });
      child.once('exit', (code, signal) => {
        if (!stopping) {
          process.stderr.write(`${country} ${service} exited (${signal ?? code}); see ${shownPath(path.join(logDir, `${country.toLowerCase()}-${service}.log`))}\n`);
          stop(1);
        }
      });
      children.push(child);
    }
  }
  for (const [country, url] of Object.entries(endpoints)) {
    await waitFor(`${country} to be ready`, async () => (await fetch(`${url}/readyz`)).status === 200, readyWithinMs);
  }
  const { file } = await seedDevelopment({ endpoints, adminToken });
  printEndpoints({ endpoints, file, mode: `distributed, ${children.length} processes, ready in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in ${shownPath(logDir)}/` });
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  stop(1);
});
