#!/usr/bin/env node
/**
 * CPU time per request of the service process, next to bare Fastify's, over a fixed number of
 * requests. On a shared host the request rate moves by a factor of two within an hour; the CPU a
 * process spends on each request moves far less, so this is the figure to compare when changing
 * the gateway's hot path (bench/run.js gives the rates the target is stated in).
 *
 *   node bench/cpu-per-request.js [--path /api/v1/me] [--requests 100000] [--rounds 3] [--connections 32]
 *                                 [--compare <another checkout, built>] [--compare-env KEY=VALUE,…] [--compare-flags "--node-flag …"]
 *
 * Embedded mode (default): one process holds the whole country pair, so its CPU is the gateway's plus
 * whatever else the request reaches. `--mode distributed` (DATABASE_URL, NATS_URL): the US gateway
 * process's CPU alone. Rounds alternate between bare Fastify, the service and, with --compare, the
 * same service started from another work tree (an A/B of two commits on one host:
 * `git worktree add /tmp/base <commit> && cd /tmp/base && npm ci && npm run build`), or with
 * `--compare-mode distributed` the same tree in the other mode (two distributed pairs would share
 * their databases and subjects, so the compared pair may not be distributed when the service is).
 */
const fs = require('node:fs');
const autocannon = require('autocannon');
const { option, freePort, start, stop, median, startCountryPair, launchedService, source } = require('./lib');

const requestPath = option('path', '/api/v1/me');
// --mode distributed (with DATABASE_URL and NATS_URL): the CPU measured is the US gateway process's alone.
const mode = option('mode', 'embedded');
const compareMode = option('compare-mode', mode);
if (mode === 'distributed' && compareMode === 'distributed' && (option('compare') || option('compare-env') || option('compare-flags'))) {
  throw new Error('two distributed pairs would share databases and NATS subjects: compare against --compare-mode embedded');
}
const requests = Number(option('requests', '100000'));
const rounds = Number(option('rounds', '3'));
const connections = Number(option('connections', '32'));
const compare = option('compare');
// --compare-env KEY=VALUE[,KEY=VALUE]: environment for the compared pair only (e.g. ACCESS_LOG=errors).
const compareEnv = Object.fromEntries((option('compare-env') ?? '').split(',').filter(Boolean).map((pair) => pair.split('=')));
// --compare-flags "--flag …": Node flags for the compared pair only, after the service's own (a later V8 flag wins).
const compareFlags = (option('compare-flags') ?? '').split(' ').filter(Boolean);
// --pin: the load generator on the first core, the servers on the second (less scheduler noise).
const pin = process.argv.includes('--pin');
const { execFileSync } = require('node:child_process');
const pinTo = (pid, cpu) => execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
const CLOCK_TICKS = 100;

/** User and system CPU seconds of a process so far. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

async function measure(pid, url, headers) {
  const before = cpuSeconds(pid);
  const generatorBefore = process.cpuUsage();
  const startedAt = process.hrtime.bigint();
  const result = await autocannon({ url, headers, connections, amount: requests, pipelining: 1 });
  const after = cpuSeconds(pid);
  const generator = process.cpuUsage(generatorBefore);
  const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const perRequest = (seconds) => Math.round((seconds * 1e6) / requests);
  return {
    cpu_us_per_request: perRequest(after.user + after.system - before.user - before.system),
    user_us: perRequest(after.user - before.user),
    system_us: perRequest(after.system - before.system),
    // The load generator's own CPU per request: on two cores it can be the side that limits the rate.
    generator_cpu_us_per_request: Math.round((generator.user + generator.system) / requests),
    // Share of one core each side was busy: near 1 is the side that sets the rate.
    server_busy: Number(((after.user + after.system - before.user - before.system) / elapsed).toFixed(2)),
    generator_busy: Number(((generator.user + generator.system) / 1e6 / elapsed).toFixed(2)),
    requests_per_second: Math.round(result.requests.average),
    p99_ms: result.latency.p99,
  };
}

async function main() {
  const baseline = await start('bench/hello-fastify.js', { PORT: String(await freePort()) }, 'listening');
  const targets = [{ name: 'bare_fastify', pid: baseline.child.pid, url: /listening (\S+)/.exec(baseline.output())[1] }];
  const pairs = [];
  try {
    const compared = compare || compareFlags.length > 0 || Object.keys(compareEnv).length > 0 || compareMode !== mode;
    for (const [name, root, env, nodeFlags, pairMode] of [['service', undefined, {}, [], mode], ...(compared ? [['compared', compare, compareEnv, compareFlags, compareMode]] : [])]) {
      const pair = await startCountryPair({ mode: pairMode, env, nodeFlags, ...(root ? { root } : {}) });
      pairs.push(pair);
      const headers = { authorization: `Bearer ${pair.credentials.api_token}` };
      const pid = pairMode === 'distributed' ? launchedService(pair.child.pid, 'gateway', 'US').pid : pair.child.pid;
      targets.push({ name, pid, url: `${pair.credentials.endpoints.US}${requestPath}`, headers });
    }
    if (pin) {
      pinTo(process.pid, 0);
      for (const target of targets) pinTo(target.pid, 1);
    }
    for (const target of targets) await autocannon({ url: target.url, headers: target.headers, connections, amount: requests / 2 });
    const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
    for (let i = 0; i < rounds; i++) {
      for (const target of targets) runs[target.name].push(await measure(target.pid, target.url, target.headers));
    }
    const summary = {
      source: source(),
      ...(compare || compareFlags.length || Object.keys(compareEnv).length || compareMode !== mode ? { compared: compare ?? 'this work tree', compared_env: compareEnv, compared_flags: compareFlags } : {}),
      mode,
      ...(compareMode !== mode ? { compared_mode: compareMode } : {}),
      path: requestPath,
      requests_per_round: requests,
      ...runs,
      median_cpu_us: Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, median(list.map((r) => r.cpu_us_per_request))])),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    for (const pair of pairs) await pair.close();
    await stop(baseline.child);
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
