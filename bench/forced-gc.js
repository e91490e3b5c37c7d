#!/usr/bin/env node
/**
 * What a full collection the program asks for (`gc()` of `node --expose-gc`, as the services'
 * reclaimMemoryWhenIdle runs when they are quiet) does to a Node.js HTTP server's rate afterwards,
 * with V8's default map retention and with the services' (`--retain-maps-for-n-gc=10000`, one of
 * MEMORY_NODE_FLAGS, which the launchers give every service). A plain `node:http` server, nothing of
 * ours: rounds of load, each followed by a quiet stretch in which the server runs a collection every
 * few seconds. The server sets the retention first thing, before any of its code has run (set later,
 * it does not reach maps that optimised code already names).
 *
 *   node bench/forced-gc.js [--rounds 6] [--duration <s of load per round> 4] [--quiet <s> 11]
 *                           [--connections 32]
 *
 * The server runs on the first core and the load generator (this process) on the last. Twenty-third
 * session: with the default retention the rate fell by about a quarter from the third round on and
 * stayed there; with the services' retention it did not (docs/performance.md).
 */
const { spawn, execFileSync } = require('node:child_process');
const os = require('node:os');
const autocannon = require('autocannon');
const { option, machine, writeResult } = require('./lib');

const rounds = Number(option('rounds', '6'));
const duration = Number(option('duration', '4'));
const quiet = Number(option('quiet', '11'));
const connections = Number(option('connections', '32'));

// The server: answers a small JSON document; when a check period was quiet, asks for a collection.
const SERVER = `
  const http = require('node:http');
  const { performance } = require('node:perf_hooks');
  if (process.env.RETAIN_MAPS) require('node:v8').setFlagsFromString('--retain-maps-for-n-gc=' + process.env.RETAIN_MAPS);
  const body = JSON.stringify({ hello: 'world' });
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
  let mark = performance.eventLoopUtilization();
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, mark).utilization;
    mark = now;
    if (busy < 0.05) gc();
  }, 5000).unref();
  server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function measure(retainMaps) {
  const child = spawn(process.execPath, ['--expose-gc', '-e', SERVER], {
    env: { ...process.env, ...(retainMaps ? { RETAIN_MAPS: String(retainMaps) } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    });
    const cores = os.cpus().length;
    if (cores > 1) {
      execFileSync('taskset', ['-a', '-p', '-c', '0', String(child.pid)], { stdio: 'ignore' });
      execFileSync('taskset', ['-a', '-p', '-c', String(cores - 1), String(process.pid)], { stdio: 'ignore' });
    }
    const rates = [];
    for (let i = 0; i < rounds; i++) {
      const result = await autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration });
      rates.push(Math.round(result.requests.average));
      await new Promise((resolve) => setTimeout(resolve, quiet * 1000));
    }
    return rates;
  } finally {
    child.kill();
  }
}

async function main() {
  const defaultRetention = await measure(undefined);
  const servicesRetention = await measure(10_000);
  const change = (rates) => Number((rates.slice(2).reduce((a, b) => a + b, 0) / (rates.length - 2) / Math.max(rates[0], rates[1])).toFixed(2));
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    load: { tool: 'autocannon', connections, duration_s: duration, quiet_s: quiet, rounds },
    requests_per_second: { default_retention: defaultRetention, retain_maps_for_10000_gcs: servicesRetention },
    // The later rounds' mean over the better of the first two (before any quiet stretch had collected twice).
    later_over_first: { default_retention: change(defaultRetention), retain_maps_for_10000_gcs: change(servicesRetention) },
  };
  const file = writeResult(result.date, 'forced-gc', result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `\nforced collections when quiet: later rounds at ${result.later_over_first.default_retention} of the first with V8's default map retention, ` +
      `${result.later_over_first.retain_maps_for_10000_gcs} with the services' (--retain-maps-for-n-gc=10000)\nwritten to ${file}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
