#!/usr/bin/env node
/**
 * Gateway benchmark: `GET /api/v1/me` with an API token against a bare Fastify JSON hello-world,
 * measured in the same run on the same machine (the machine is shared and noisy, so the figure that
 * counts is the ratio), plus the idle memory of one country's services.
 *
 *   node bench/run.js [--mode embedded|distributed] [--duration 6] [--connections 32] [--rounds 5] [--shape-baseline]
 *   node bench/run.js --target http://127.0.0.1:3001 --token <API token>   # a country already running
 *
 * distributed needs DATABASE_URL and NATS_URL, like `npm run start:distributed`. The service is
 * started by this script with the per-application limit raised to 10,000,000/s (at its default of
 * 100/s it would cap the load; raised rather than off, so its cost is measured) and its normal logging (one JSON access line per request, to a file).
 * Results are printed and written to bench/results/<timestamp>-<mode>.json.
 *
 * Every round also records how busy the server process was (`server_busy`, CPU time over wall time)
 * and the load generator (`generator_busy`); `rounds_not_server_bound` lists the rounds in which a
 * server was under 90 % busy, where the generator or the host, not that server, set the rate.
 *
 * --shape-baseline adds a third server to every round: bare Fastify answering `/me`'s headers and
 * body (bench/hello-fastify.js, SHAPE=me). `ratio` stays the target's figure (against the
 * hello-world); `ratio_to_me_shaped` tells how much of the gap is the answer itself.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { ROOT, option, freePort, start, stop, median, startCountryPair, machine, source, writeResult, launchedService } = require('./lib');

const mode = option('mode', 'embedded');
const duration = Number(option('duration', '6'));
const connections = Number(option('connections', '32'));
const rounds = Number(option('rounds', '5'));
const shapeBaseline = process.argv.includes('--shape-baseline');

/**
 * The figure the target is stated in: the median, over rounds, of `/me`'s rate divided by the rate of
 * the baseline round just before it. The host's speed drifts by a factor of two within minutes, and
 * the two rates of one round pair are taken seconds apart, so each pair's quotient cancels most of
 * the drift; the quotient of the two medians (`ratio_of_medians`, reported too, and the figure
 * before the seventh session) compares rounds taken minutes apart whenever the drift has a trend.
 */
function pairedRatio(baselineRuns, meRuns) {
  return median(meRuns.map((me, i) => me.requests_per_second / baselineRuns[i].requests_per_second));
}

const CLOCK_TICKS = 100;
/** CPU seconds (user and system, every thread) a process has used so far. */
function cpuSecondsOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * One round against a server. With its pid, also how busy the server process was (its CPU time over
 * the round's wall time) and this process, the load generator: a server well under one core busy
 * was not what set the rate (the generator, or the host, was), and its round says little about it.
 */
async function load(url, headers, pid) {
  const cpuBefore = pid ? cpuSecondsOf(pid) : 0;
  const selfBefore = process.cpuUsage();
  const started = performance.now();
  const result = await autocannon({ url, headers, connections, duration, pipelining: 1 });
  const seconds = (performance.now() - started) / 1000;
  const self = process.cpuUsage(selfBefore);
  if (result.non2xx > 0) process.stderr.write(`warning: ${result.non2xx} answers from ${url} were not 2xx\n`);
  return {
    requests_per_second: result.requests.average,
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    ...(pid ? { server_busy: Number(((cpuSecondsOf(pid) - cpuBefore) / seconds).toFixed(2)) } : {}),
    generator_busy: Number(((self.user + self.system) / 1e6 / seconds).toFixed(2)),
  };
}

/** Below this, a round's server had idle time: something else set the rate (see load()). */
const SERVER_BOUND = 0.9;

/** Resident memory of processes, from /proc, in MiB: every process's own VmRSS, added up. */
function rssMiB(pids) {
  let kib = 0;
  for (const pid of pids) {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return Math.round(kib / 1024);
}

/**
 * Memory the processes take from the machine together, in MiB: each one's private pages, plus the
 * pages they share (the Node.js binary, its libraries, the page cache of the same files) counted
 * once rather than once per process, as a plain sum of VmRSS does. The shared part is bounded by
 * the largest shared set of any one process, since every service maps the same binary and files.
 */
function togetherMiB(pids) {
  let privateKib = 0;
  let sharedKib = 0;
  for (const pid of pids) {
    const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0);
    privateKib += field('Private_Clean') + field('Private_Dirty');
    sharedKib = Math.max(sharedKib, field('Shared_Clean') + field('Shared_Dirty'));
  }
  return Math.round((privateKib + sharedKib) / 1024);
}

/**
 * Idle memory once it has settled: the services give start-up's heap back once they have been quiet
 * for a while (reclaimMemoryWhenIdle, within about half a minute), so sample every 5 s from 30 s
 * after ready (up to two minutes) until two samples in a row differ by less than 2 %.
 */
async function settledMemory(pids) {
  await new Promise((resolve) => setTimeout(resolve, 25000));
  let last = togetherMiB(pids);
  for (let waited = 25; waited < 120; waited += 5) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const now = togetherMiB(pids);
    if (Math.abs(now - last) / last < 0.02) break;
    last = now;
  }
  return { together_mib: togetherMiB(pids), rss_sum_mib: rssMiB(pids) };
}

function childrenOf(pid) {
  return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter(Boolean);
}

function countryOf(pid) {
  const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return environ.find((e) => e.startsWith('COUNTRY='))?.slice(8);
}

/** Against a country someone else started: only the throughput comparison, no memory figure. */
async function againstRunningCountry(target, token) {
  const baseline = await start('bench/hello-fastify.js', { PORT: String(await freePort()) }, 'listening');
  try {
    const baselineUrl = /listening (\S+)/.exec(baseline.output())[1];
    const meUrl = `${target.replace(/\/$/, '')}/api/v1/me`;
    const headers = { authorization: `Bearer ${token}` };
    await autocannon({ url: baselineUrl, connections, duration: 3 });
    await autocannon({ url: meUrl, headers, connections, duration: 3 });
    const baselineRuns = [];
    const meRuns = [];
    for (let i = 0; i < rounds; i++) {
      baselineRuns.push(await load(baselineUrl));
      meRuns.push(await load(meUrl, headers));
    }
    const ratio = pairedRatio(baselineRuns, meRuns);
    const ratioOfMedians = median(meRuns.map((r) => r.requests_per_second)) / median(baselineRuns.map((r) => r.requests_per_second));
    process.stdout.write(`${JSON.stringify({ target, baseline_fastify_hello: baselineRuns, gateway_me: meRuns, ratio, ratio_of_medians: ratioOfMedians }, null, 2)}\n`);
    process.stdout.write(`\n/api/v1/me at ${target}: ${(ratio * 100).toFixed(0)} % of bare Fastify (its rate limit applies: raise RATE_LIMIT_RPS there)\n`);
  } finally {
    await stop(baseline.child);
  }
}

async function main() {
  const target = option('target');
  if (target) return againstRunningCountry(target, option('token') ?? process.env.DCR_API_TOKEN);
  const baseline = await start('bench/hello-fastify.js', { PORT: String(await freePort()) }, 'listening');
  const baselineUrl = /listening (\S+)/.exec(baseline.output())[1];
  const shaped = shapeBaseline ? await start('bench/hello-fastify.js', { PORT: String(await freePort()), SHAPE: 'me' }, 'listening') : undefined;
  const shapedUrl = shaped && /listening (\S+)/.exec(shaped.output())[1];
  let service;
  try {
    service = await startCountryPair({ mode });
    // With --pin the baseline gets the service's cores too, so that both are measured alike.
    if (service.placement) {
      for (const child of [baseline.child, shaped?.child].filter(Boolean)) {
        execFileSync('taskset', ['-a', '-p', '-c', service.placement.service_cores, String(child.pid)], { stdio: 'ignore' });
      }
    }
    const { credentials } = service;
    const meUrl = `${credentials.endpoints.US}/api/v1/me`;
    const headers = { authorization: `Bearer ${credentials.api_token}` };

    const usPids = mode === 'distributed' ? childrenOf(service.child.pid).filter((pid) => countryOf(pid) === 'US') : [service.child.pid];
    const idleMemory = {
      processes: usPids.length,
      ...(await settledMemory(usPids)),
      note: mode === 'distributed' ? 'the eight US service processes' : 'one process holding both countries (US and DE)',
    };

    // Warm both up, then alternate so drift on a shared machine hits both alike.
    const warm = { ...{ duration: 3 } };
    await autocannon({ url: baselineUrl, connections, ...warm });
    await autocannon({ url: meUrl, headers, connections, ...warm });
    if (shapedUrl) await autocannon({ url: shapedUrl, connections, ...warm });
    const baselineRuns = [];
    const meRuns = [];
    const shapedRuns = [];
    // The process whose CPU answers /me: the embedded process, or the US gateway's.
    const mePid = mode === 'distributed' ? launchedService(service.child.pid, 'gateway', 'US').pid : service.child.pid;
    for (let i = 0; i < rounds; i++) {
      baselineRuns.push(await load(baselineUrl, undefined, baseline.child.pid));
      if (shapedUrl) shapedRuns.push(await load(shapedUrl, undefined, shaped.child.pid));
      meRuns.push(await load(meUrl, headers, mePid));
    }
    // Rounds in which either server had idle time: their quotient is not the servers' (see load()).
    const notServerBound = meRuns.map((me, i) => i).filter((i) => baselineRuns[i].server_busy < SERVER_BOUND || meRuns[i].server_busy < SERVER_BOUND);
    const shapedFigures = shapedUrl
      ? {
          baseline_fastify_me_shaped: shapedRuns,
          ratio_to_me_shaped: pairedRatio(shapedRuns, meRuns),
          me_shaped_to_hello: pairedRatio(baselineRuns, shapedRuns),
        }
      : {};
    const result = {
      date: new Date().toISOString(),
      mode,
      machine: machine(),
      placement: service.placement ?? 'none',
      source: source(),
      load: { tool: 'autocannon', connections, duration_s: duration, rounds },
      baseline_fastify_hello: baselineRuns,
      gateway_me: meRuns,
      ratio: pairedRatio(baselineRuns, meRuns),
      round_ratios: meRuns.map((me, i) => Number((me.requests_per_second / baselineRuns[i].requests_per_second).toFixed(3))),
      ratio_of_medians: median(meRuns.map((r) => r.requests_per_second)) / median(baselineRuns.map((r) => r.requests_per_second)),
      gateway_me_p99_ms: median(meRuns.map((r) => r.latency_p99_ms)),
      rounds_not_server_bound: { threshold_busy: SERVER_BOUND, rounds: notServerBound.map((i) => i + 1) },
      // The service takes this script's environment: a setting changed there is part of the result.
      service_settings: { ACCESS_LOG: process.env.ACCESS_LOG ?? 'all (the default)' },
      ...shapedFigures,
      idle_memory: idleMemory,
    };
    const file = writeResult(result.date, mode, result);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      `\n${mode}: /api/v1/me ${median(meRuns.map((r) => r.requests_per_second)).toFixed(0)} req/s = ${(result.ratio * 100).toFixed(0)} % of bare Fastify ` +
        `(${median(baselineRuns.map((r) => r.requests_per_second)).toFixed(0)} req/s): the median of ${rounds} paired rounds (${result.round_ratios.join(', ')}; ` +
        `quotient of the medians ${(result.ratio_of_medians * 100).toFixed(0)} %), p99 ${result.gateway_me_p99_ms} ms; idle ${idleMemory.together_mib} MiB together, ${idleMemory.rss_sum_mib} MiB as a sum of RSS (${idleMemory.note})\n` +
        (shapedUrl
          ? `against bare Fastify answering /me's headers and body: ${(result.ratio_to_me_shaped * 100).toFixed(0)} %; that server reaches ${(result.me_shaped_to_hello * 100).toFixed(0)} % of the hello-world\n`
          : '') +
        (notServerBound.length > 0
          ? `note: in round(s) ${notServerBound.map((i) => i + 1).join(', ')} a server was under ${SERVER_BOUND * 100} % busy (server_busy): the load generator or the host set that round's rate\n`
          : '') +
        `written to ${path.relative(ROOT, file)}\n`,
    );
  } finally {
    await service?.close();
    await stop(baseline.child);
    if (shaped) await stop(shaped.child);
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
