#!/usr/bin/env node
/**
 * Record API benchmark (issue 7): `POST /api/v1/consent_records` through the whole path (edge
 * validation, capture rules, the person bound through the residency directory, one transaction with
 * the record and its outbox event; the audit entry, webhooks and receipt follow from the outbox),
 * against the single-row insert rate `pgbench` reaches on the same PostgreSQL at the same
 * concurrency in the same run: `--rounds` times pgbench and then the Record API, the share judged
 * round by round and the median round reported. Then half that round's rate, evenly paced, for the
 * p99.
 *
 *   node bench/records.js [--duration 10] [--connections 16] [--rounds 3] [--paced-rate N] [--idempotency-keys]
 *                         [--load raw|autocannon] [--returning-people N] [--warm-up 30] [--stall-probe <file>]
 *                         [--pg-stat-statements] [--mode embedded|distributed]
 *
 * Each round reports the WAL PostgreSQL wrote per record (`postgres`: records, bytes, full-page
 * images; the whole cluster, so the peer country's directory writes count too); with
 * `--pg-stat-statements` the embedded PostgreSQL runs with pg_stat_statements preloaded and each
 * round also lists the statements that cost it most, per record (calls, execution and planning
 * time, rows, WAL records: `postgres.statements`).
 *
 * The saturation rounds' generator (`--load`): `raw` (the default since the twenty-fourth session)
 * is bench/paced-load.js `saturate` on kept-alive connections, each sending its next request when
 * its last is answered, for `--duration` seconds; `autocannon` keeps autocannon with a
 * `setupRequest` that builds each request's body (each records a new person), as before. The
 * generator shares PostgreSQL's core (`--pin`), where pgbench's own client runs on the other core;
 * autocannon cost that core 0.13-0.17 ms of CPU per record against 0.09-0.10 ms with the raw
 * generator (alternating runs, twenty-fourth session). Each round reports the generator's CPU per
 * record (`cpu.load_generator_cpu_ms_per_request`).
 *
 * Each round also reports its ceiling (bench/lib.js `ceilingRate`): the most records per second its
 * measured CPU per record allows with every core each side may use busy all the time, and that as a
 * share of the round's pgbench. A round well under its ceiling waits (round trips, flushes); a
 * target over the ceiling cannot be met on that host at those costs, however the waits are cut.
 *
 * Embedded by default; `--mode distributed` (with DATABASE_URL and NATS_URL, as `npm run
 * start:distributed` takes them) runs every service of each country as its own process against
 * those servers, pgbench against the same PostgreSQL, and each round's `cpu` then also names each
 * process's CPU per record (`service_cpu_ms_per_request_by_process`, `<country> <service>`): where a
 * record's cost goes, service by service. The probes (`--pg-stat-statements`, `--cpu-prof`,
 * `--sql-trace`, `--record-stages`) are embedded only. Every request records
 * a new person (homed through the residency directory, confirmed with the peer country); with
 * `--returning-people N` every request is instead a new decision of one of N people recorded before
 * the rounds (no homing; the person's last record superseded, with a withdrawal every other pass).
 * With --idempotency-keys each request also carries a key of its own (as a client that retries
 * safely sends it). Results go to bench/results/<timestamp>-records-<mode>.json.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const autocannon = require('autocannon');
const { option, startCountryPair, machine, hostCalibration, source, writeResult, cpuMeter, settlePostgres, ceilingRate, postgresWork } = require('./lib');
const { capturableFlow, summary, warnIfFailed, paced, log, drainOutbox } = require('./decisions');
const { saturate } = require('./paced-load');

const duration = Number(option('duration', '10'));
const connections = Number(option('connections', '16'));
const rounds = Math.max(1, Number(option('rounds', '3')));
const idempotencyKeys = process.argv.includes('--idempotency-keys');
const load = option('load', 'raw');
const returningPeople = Number(option('returning-people', '0'));
// Thirty seconds of saturation before the rounds: after three, V8 was still compiling the service's
// paths (its background threads took a fifth of the service's core) and a record cost a quarter more
// CPU than after thirty; sixty gave no more (docs/performance.md, thirty-second session).
const warmUp = Number(option('warm-up', '30'));
const mode = option('mode', 'embedded');
if (mode !== 'embedded' && mode !== 'distributed') throw new Error('--mode is embedded or distributed');
if (load !== 'raw' && load !== 'autocannon') throw new Error('--load is raw or autocannon');

function pgbench(databaseUrl, placement) {
  const url = new URL(databaseUrl);
  const env = { ...process.env, PGPASSWORD: decodeURIComponent(url.password) };
  const args = ['-h', url.hostname, '-p', url.port, '-U', decodeURIComponent(url.username), url.pathname.slice(1)];
  execFileSync('psql', [...args, '-qc', 'CREATE TABLE IF NOT EXISTS public.pgbench_single_row (id bigserial PRIMARY KEY, payload text NOT NULL)'], { env });
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pgbench-')), 'insert.sql');
  fs.writeFileSync(script, "INSERT INTO public.pgbench_single_row (payload) VALUES ('consent');\n");
  // With --pin, pgbench (the client standing where the service stands) runs on the service's cores.
  const command = placement ? ['taskset', '-c', placement.service_cores, 'pgbench'] : ['pgbench'];
  const output = execFileSync(command[0], [...command.slice(1), '-n', '-c', String(connections), '-j', '2', '-T', String(duration), '-f', script, ...args], { env, encoding: 'utf8' });
  execFileSync('psql', [...args, '-qc', 'DROP TABLE public.pgbench_single_row'], { env });
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1]);
  return { tps: Math.round(tps), output: output.split('\n').filter((line) => /tps|latency|clients/.test(line)) };
}

/**
 * With a probe preloaded (`--sql-trace`, `--record-stages`), SIGUSR2 makes it write what it counted
 * since the last mark and start again: a mark before and after each saturation round leaves that
 * round alone in the odd phase files (`<file>.phase1.json` is the first round, `phase3` the second).
 */
let markPhase = () => undefined;

/** `count` people recorded through imports (10,000 rows each) before the rounds: their e-mail addresses. */
async function recordPeople(base, headers, flowId, count, decisions) {
  const emails = Array.from({ length: count }, (_, i) => `returning-${process.pid}-${i}@example.com`);
  for (let start = 0; start < count; start += 10_000) {
    const records = emails.slice(start, start + 10_000).map((email) => ({ subject: { email }, decisions, captured_at: '2025-01-01T00:00:00.000Z' }));
    const response = await fetch(`${base}/api/v1/consent_records/imports`, { method: 'POST', headers, body: JSON.stringify({ flow_id: flowId, dry_run: false, records }) });
    const report = await response.json();
    if (response.status !== 201 || report.summary.refused > 0) throw new Error(`importing the returning people: ${response.status} ${JSON.stringify(report.summary ?? report)}`);
  }
  log(`records: ${count} returning people recorded before the rounds`);
  return emails;
}

async function main() {
  const measuredSource = source();
  const calibrationBefore = hostCalibration();
  const service = await startCountryPair({ mode });
  if (option('sql-trace') || option('record-stages')) markPhase = () => process.kill(service.child.pid, 'SIGUSR2');
  const result = { date: new Date().toISOString(), mode, machine: machine(), placement: service.placement ?? 'none', source: measuredSource, load: { connections, duration_s: duration, rounds, idempotency_keys: idempotencyKeys, generator: load, returning_people: returningPeople } };
  try {
    const { credentials } = service;
    const base = credentials.endpoints.US;
    const token = credentials.api_token;
    const flowId = await capturableFlow(base, credentials, 'Signup form');
    let n = 0;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // `--returning-people N`: N people recorded before the rounds (one import), and every request a
    // new decision of one of them in turn, the newsletter flipped on every pass over them, so each
    // record supersedes the person's last one and withdraws from it every other pass.
    const decision = (newsletter) => ({ newsletter: { decision: newsletter, default_checked: false, mandatory: false }, analytics: { decision: 'declined', default_checked: false, mandatory: false }, fraud: { decision: 'granted', default_checked: true, mandatory: false } });
    const pool = returningPeople > 0 ? await recordPeople(base, headers, flowId, returningPeople, decision('granted')) : [];
    const body = () => {
      const i = n++;
      return JSON.stringify({
        flow_id: flowId,
        subject: { email: pool.length > 0 ? pool[i % pool.length] : `person-${process.pid}-${i}@example.com` },
        decisions: decision(pool.length > 0 && Math.floor(i / pool.length) % 2 === 0 ? 'declined' : 'granted'),
        captured_at: new Date().toISOString(),
        ...(idempotencyKeys ? { idempotency_key: `key-${process.pid}-${i + 1}` } : {}),
      });
    };
    const options = { url: `${base}/api/v1/consent_records`, method: 'POST', headers, connections, requests: [{ setupRequest: (request) => ({ ...request, body: body() }) }] };

    /** `seconds` of saturation with the chosen generator: its summary (as decisions.js summary()) and the requests. */
    const saturation = async (seconds) => {
      if (load === 'autocannon') {
        const result = await autocannon({ ...options, duration: seconds });
        warnIfFailed('records saturation', result);
        return { summary: summary(result), requests: result.requests.total, perSecond: Math.round(result.requests.total / seconds) };
      }
      const request = () => ({ method: 'POST', path: '/api/v1/consent_records', headers, body: body() });
      const { statuses, errors, ...result } = await saturate({ base, sockets: connections, durationS: seconds, next: request });
      const non2xx = Object.entries(statuses).reduce((sum, [status, count]) => sum + (status.startsWith('2') ? 0 : count), 0);
      if (non2xx > 0 || errors > 0) log(`warning: records saturation: ${non2xx} answers not 2xx, ${errors} errors`);
      // Timed from the first write to the last answer (the requests in flight at the end included).
      return { summary: { ...result, non_2xx: non2xx, errors }, requests: result.requests, perSecond: Math.round(result.requests_per_second) };
    };

    log(`records: warm-up (${warmUp} s, generator ${load})`);
    await saturation(warmUp);
    // pgbench and the Record API in turn, `rounds` times: the share is judged round by round (each
    // record rate against the pgbench rate just before it), and the median of the rounds is the
    // result. pgbench is bound by the disk's flushes, which moved by a factor of two within minutes
    // on this host, so one pgbench run against one record run measured the disk's moment as much as
    // the service.
    const pgbenchRounds = [];
    const recordRounds = [];
    for (let round = 1; round <= rounds; round++) {
      // What the last round left to relay (audit entries, receipts) is done before pgbench runs.
      const drained = await drainOutbox(service.databaseUrl('US'));
      const settled = await settlePostgres(service.databaseUrl('US'));
      log(`round ${round} of ${rounds}: outbox drained in ${drained} s, PostgreSQL settled in ${settled} s; pgbench, single-row inserts, ${connections} clients, ${duration} s`);
      const pgbenchMeter = cpuMeter(service.child.pid);
      const inserts = pgbench(service.databaseUrl('US'), service.placement);
      // PostgreSQL's own CPU per insert of pgbench (it ran `duration` seconds at `tps`), the yardstick
      // for its CPU per record below: a record's rows cost PostgreSQL that many inserts.
      const pgbenchCpu = pgbenchMeter.stop(Math.max(1, inserts.tps * duration));
      inserts.postgres_cpu_ms_per_insert = pgbenchCpu.postgres_cpu_ms_per_request;
      inserts.postgres_cpu_cores = pgbenchCpu.postgres_cpu_cores;
      inserts.postgres_settled_after_s = await settlePostgres(service.databaseUrl('US'));
      log(`pgbench: ${inserts.tps} inserts/s, PostgreSQL ${pgbenchCpu.postgres_cpu_ms_per_request} ms of CPU per insert; settled in ${inserts.postgres_settled_after_s} s`);
      pgbenchRounds.push(inserts);

      log(`round ${round} of ${rounds}: records, saturation, ${connections} connections, ${duration} s`);
      markPhase();
      const work = postgresWork(service.databaseUrl('US'), { statements: process.argv.includes('--pg-stat-statements') });
      await work.start();
      const meter = cpuMeter(service.child.pid);
      const measured = await saturation(duration);
      const cpu = meter.stop(measured.requests);
      markPhase();
      const postgres = await work.stop(measured.requests);
      const recordsPerSecond = measured.perSecond;
      const share = Math.round((1000 * recordsPerSecond) / inserts.tps) / 1000;
      // What this round's CPU costs allow at most, with every core each side may use busy all the
      // time (bench/lib.js ceilingRate): the share the host could reach at these costs, whatever the waits.
      const ceiling = ceilingRate(cpu, recordsPerSecond, service.placement, inserts.tps);
      log(`records: ${recordsPerSecond}/s, ${Math.round(share * 100)} % of this round's pgbench; the service's event loop ${cpu.service_busiest_main_thread_cores} of a core busy; cores ${cpu.machine_core_busy_percent.join(' / ')} % busy`);
      log(`records: at this round's CPU per record the cores allow at most ${ceiling.records_per_second}/s, ${Math.round(100 * ceiling.share_of_pgbench)} % of its pgbench (bound by ${ceiling.bound_by})`);
      log(`records: PostgreSQL wrote ${postgres.wal_records_per_unit} WAL records (${postgres.wal_bytes_per_unit} bytes, ${postgres.wal_full_page_images_per_unit} full pages) and committed ${postgres.commits_per_unit} transactions per record`);
      recordRounds.push({ ...measured.summary, cpu, records_per_second: recordsPerSecond, share_of_pgbench: share, ceiling, postgres });
    }
    const byShare = [...recordRounds.keys()].sort((a, b) => recordRounds[a].share_of_pgbench - recordRounds[b].share_of_pgbench);
    const middle = byShare[Math.floor(byShare.length / 2)];
    result.pgbench = { ...pgbenchRounds[middle], rounds: pgbenchRounds };
    result.postgres_settled_after_pgbench_s = pgbenchRounds[middle].postgres_settled_after_s;
    const { cpu, records_per_second: rate, share_of_pgbench: share, ceiling, postgres, ...saturationSummary } = recordRounds[middle];
    // `--paced-rate N` paces the second phase at N/s instead of half the measured rate: a fixed load
    // whose CPU per record (half_rate_paced.cpu) compares two builds without the saturation's
    // contention in it.
    const half = Number(option('paced-rate', '0')) || Math.max(1, Math.round(rate / 2));
    log(`records: the median round ${rate}/s (${Math.round(100 * share)} % of its pgbench); evenly paced ${half}/s for ${duration} s`);
    const pacedWork = postgresWork(service.databaseUrl('US'), { statements: process.argv.includes('--pg-stat-statements') });
    await pacedWork.start();
    const pacedMeter = cpuMeter(service.child.pid);
    const pacedFrom = new Date().toISOString();
    const pacedRun = await paced({ base, rate: half, total: half * duration, next: () => ({ method: 'POST', path: '/api/v1/consent_records', headers, body: body() }) });
    pacedRun.cpu = pacedMeter.stop(pacedRun.requests);
    // What PostgreSQL did per record at half the rate (WAL, commits, with --pg-stat-statements its
    // costliest statements): smaller batches than at saturation, so more of it per record.
    pacedRun.postgres = await pacedWork.stop(pacedRun.requests);
    // When it ran, to read a probe's log (`--stall-probe`) for that window.
    pacedRun.window = { from: pacedFrom, to: new Date().toISOString() };
    result.records = {
      // The round of the median share (its pgbench run is `pgbench` above); every round in `rounds`.
      saturation: { ...saturationSummary, cpu, postgres },
      records_per_second: rate,
      share_of_pgbench: share,
      rounds: recordRounds,
      // How many pgbench inserts' worth of PostgreSQL CPU one record takes: with PostgreSQL alone on
      // a core, the share of pgbench's rate the Record API could reach is at most its inverse.
      postgres_cpu_in_pgbench_inserts: result.pgbench.postgres_cpu_ms_per_insert > 0 ? Math.round((100 * cpu.postgres_cpu_ms_per_request) / result.pgbench.postgres_cpu_ms_per_insert) / 100 : null,
      // The median round's ceiling: the most its CPU costs allow (each round's is in `rounds`).
      ceiling,
      half_rate_paced: pacedRun,
    };
    result.target = { share_of_pgbench: 0.25, p99_ms_at_half_load: 100 };
    result.host_calibration_ms = { before: calibrationBefore, after: hostCalibration(), note: 'a fixed CPU task on core 0 (bench/lib.js hostCalibration): lower is a faster host' };
  } finally {
    await service.close();
  }
  const file = writeResult(result.date, `records-${mode}`, result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`written to ${file}`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
