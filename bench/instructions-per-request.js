#!/usr/bin/env node
/**
 * Instructions per request of the gateway process, next to bare Fastify's, counted by valgrind's
 * callgrind: a count, not a time, so it is the same from one run to the next on a noisy shared host
 * (two runs of the same build agree to within about 0.5 %, where CPU time per request moves by
 * ±30 %). It is the figure to compare when changing the gateway's hot path; bench/run.js gives the
 * rates the target is stated in. It counts user-space instructions only: the kernel's side of
 * socket writes (a large, fixed part of every request, bare Fastify's too) is not in it.
 *
 *   DATABASE_URL=… NATS_URL=… node bench/instructions-per-request.js [--path /api/v1/me]
 *       [--requests 3000] [--rounds 3] [--compare <another checkout, built>]
 *
 * How: the distributed mode is started (every service its own process); then a second US gateway is
 * started under `valgrind --tool=callgrind --instr-atstart=no`, with the environment and Node flags
 * of the US gateway the launcher started (read from /proc), on its own port, and warmed up. For each
 * round, instrumentation is switched on, a fixed number of requests is sent, it is switched off, and
 * the counts are dumped (`callgrind_control`). With --compare, a third gateway is started the same
 * way from another work tree (same database, so the two commits must share their migrations), and
 * bare Fastify (bench/hello-fastify.js) is always measured the same way. Needs Debian's valgrind.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { ROOT, option, freePort, stop, median, startCountryPair, launchedService, source, writeResult } = require('./lib');

const requestPath = option('path', '/api/v1/me');
const requests = Number(option('requests', '3000'));
const rounds = Number(option('rounds', '3'));
const compare = option('compare');
const WARM_UP_REQUESTS = 6000;
const CONNECTIONS = 8;

/** `node [flags] script` under callgrind with instrumentation off; resolves once `ready()` is true. */
async function underCallgrind(name, flags, script, env, ready) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `dcr-callgrind-${name}-`));
  const log = fs.openSync(path.join(outDir, 'output.log'), 'a');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${path.join(outDir, 'callgrind.out')}`,
      process.execPath,
      ...flags,
      script,
    ],
    { env, stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const deadline = Date.now() + 10 * 60 * 1000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited under valgrind:\n${fs.readFileSync(path.join(outDir, 'output.log'), 'utf8').slice(-4000)}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) throw new Error(`${name} was not ready under valgrind within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { name, child, outDir, host: env.HOST };
}

/**
 * valgrind names its control pipes after the HOST variable of the process it runs (the gateway's is
 * its listen address), and callgrind_control looks for them under its own: they must agree.
 */
function control(target, ...args) {
  const env = { ...process.env };
  if (target.host === undefined) delete env.HOST;
  else env.HOST = target.host;
  execFileSync('callgrind_control', [...args, String(target.child.pid)], { stdio: 'ignore', env });
}

/** Instructions the process ran while `amount` requests were answered, per request. */
async function instructionsPerRequest(target) {
  control(target, '-z');
  control(target, '-i', 'on');
  const result = await autocannon({ url: target.url, headers: target.headers, connections: CONNECTIONS, amount: requests });
  control(target, '-i', 'off');
  control(target, '-d');
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  // Each dump is callgrind.out.<n>-<thread>: the main thread's (-01) is the one counted. V8's helper
  // threads (optimising compiler, concurrent marking and sweeping) run in bursts whose size depends
  // on when they happen to fall in a round, not on the code measured: two rounds of the same build
  // differed by a factor of four with them, by about 1 % without.
  let totals;
  for (let attempt = 0; attempt < 50 && !totals; attempt++) {
    const dumps = fs.readdirSync(target.outDir).filter((name) => /^callgrind\.out\.\d+-\d+$/.test(name));
    const main = dumps.find((name) => name.endsWith('-01'));
    if (main) totals = /^totals: (\d+)/m.exec(fs.readFileSync(path.join(target.outDir, main), 'utf8')) ?? undefined;
    if (totals) for (const file of dumps) fs.rmSync(path.join(target.outDir, file));
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!totals) throw new Error(`${target.name}: callgrind wrote no dump of the main thread (${fs.readdirSync(target.outDir).join(', ')})`);
  return Math.round(Number(totals[1]) / requests);
}

async function main() {
  if (!process.env.DATABASE_URL || !process.env.NATS_URL) throw new Error('DATABASE_URL and NATS_URL must be set (the distributed mode)');
  const pair = await startCountryPair({ mode: 'distributed' });
  const targets = [];
  try {
    const gateway = launchedService(pair.child.pid, 'gateway', 'US');
    const headers = { authorization: `Bearer ${pair.credentials.api_token}` };
    const barePort = await freePort();
    const bare = await underCallgrind('bare_fastify', [], path.join(ROOT, 'bench', 'hello-fastify.js'), { ...process.env, PORT: String(barePort) }, async () =>
      (await fetch(`http://127.0.0.1:${barePort}/`)).ok,
    );
    targets.push({ ...bare, url: `http://127.0.0.1:${barePort}/` });
    for (const [name, root] of [['service', ROOT], ...(compare ? [['compared', path.resolve(compare)]] : [])]) {
      const port = await freePort();
      const started = await underCallgrind(name, gateway.flags, path.join(root, 'apps', 'gateway', 'dist', 'main.js'), { ...gateway.env, PORT: String(port) }, async () =>
        (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
      );
      targets.push({ ...started, url: `http://127.0.0.1:${port}${requestPath}`, headers });
    }
    for (const target of targets) await autocannon({ url: target.url, headers: target.headers, connections: CONNECTIONS, amount: WARM_UP_REQUESTS });
    const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
    for (let i = 0; i < rounds; i++) {
      for (const target of targets) runs[target.name].push(await instructionsPerRequest(target));
    }
    const medians = Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, median(list)]));
    const summary = {
      benchmark: 'instructions-per-request',
      source: source(),
      ...(compare ? { compared: compare } : {}),
      path: requestPath,
      requests_per_round: requests,
      instructions_per_request: runs,
      median: medians,
      // What a CPU-bound service's rate would be against bare Fastify's if instructions were all (they are not: see above).
      bare_over_service: Number((medians.bare_fastify / medians.service).toFixed(3)),
      ...(compare ? { compared_over_service: Number((medians.compared / medians.service).toFixed(3)) } : {}),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(`written to ${writeResult(new Date().toISOString(), 'instructions', summary)}\n`);
  } finally {
    for (const target of targets) {
      await stop(target.child);
      if (!process.env.KEEP_CALLGRIND) fs.rmSync(target.outDir, { recursive: true, force: true });
    }
    await pair.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
