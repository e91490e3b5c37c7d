#!/usr/bin/env node
/**
 * Audit trail benchmark (issue 4), per country:
 *
 * 1. appends: the audit-chain service (built code, in this process, in-process transport) against a
 *    fresh database, fed by `--producers` loops that each send `audit-chain.append` requests of
 *    `--batch` events as fast as they are confirmed, the way the services' outbox relays do under
 *    load. Reports appends/s over `--duration` seconds after a warm-up, the latency of an append
 *    request, and the CPU per append of this process and of PostgreSQL.
 * 2. proofs: inclusion proofs of random entries, timed with 1 anchor and again after `--anchors`
 *    more anchors, and consistency proofs between anchors: proof generation reads stored subtree
 *    hashes only, so its cost must not depend on how many anchors exist.
 *
 * The time from a committed decision to its audit entry under load is measured by
 * bench/decisions.js (it reads appended_at - occurred_at of the entries written during its runs).
 *
 *   node bench/audit.js [--duration 10] [--producers 4] [--batch 100] [--anchors 1000] [--proofs 2000]
 *
 * The database: DATABASE_URL's server when set (a database dcr_bench_audit_<random> is created and
 * dropped), else an embedded PostgreSQL in a temporary folder, as `npm start` runs it.
 * Results are printed and written to bench/results/<timestamp>-audit.json.
 */
const crypto = require('node:crypto');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { option, machine, source, writeResult, cpuMeter } = require('./lib');
const { startBenchService } = require('./bench-database');

const duration = Number(option('duration', '10'));
const producers = Number(option('producers', '4'));
const batch = Number(option('batch', '100'));
const extraAnchors = Number(option('anchors', '1000'));
const proofCount = Number(option('proofs', '2000'));

const log = (line) => process.stderr.write(`${line}\n`);
const round = (n, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

const APPLICATIONS = Array.from({ length: 50 }, (_, i) => `tp_dev_${crypto.createHash('sha256').update(String(i)).digest('hex').slice(0, 16)}`);

function eventBatch(size) {
  const now = new Date().toISOString();
  return Array.from({ length: size }, () => {
    const id = `evt_${crypto.randomBytes(10).toString('hex')}`;
    return {
      id,
      type: 'decision.state_changed',
      application_id: APPLICATIONS[crypto.randomInt(APPLICATIONS.length)],
      actor: { type: 'participant' },
      occurred_at: now,
      payload: { session_id: `dts_us${id.slice(4)}`, kind: 'consent', from: 'evidenced', to: 'fulfilled', actor: { type: 'participant' } },
    };
  });
}

async function main() {
  const { auditChainService } = require('../apps/audit-chain/dist');
  const { AuditChainEnvironment } = require('../libs/config/dist');
  const { AUDIT_APPEND, AUDIT_ANCHOR_NOW, AUDIT_INCLUSION_PROOF, AUDIT_CONSISTENCY_PROOF } = require('../libs/contracts/dist');

  const bench = await startBenchService({ label: 'audit', definition: auditChainService, environment: AuditChainEnvironment, env: { ANCHOR_INTERVAL: '24h' } });
  const { db, env, send } = bench;
  const result = { date: new Date().toISOString(), machine: machine(), source: source(), database: db.kind, settings: { duration, producers, batch, db_pool_size: env.DB_POOL_SIZE } };
  try {
    // 1. Appends at saturation.
    let stopAt = performance.now() + 2000;
    let appended = 0;
    const latencies = [];
    const loop = async (measure) => {
      while (performance.now() < stopAt) {
        const started = performance.now();
        const reply = await send(AUDIT_APPEND, { source: 'bench', events: eventBatch(batch) });
        if (measure) {
          latencies.push(performance.now() - started);
          appended += reply.appended;
        }
      }
    };
    log('warming up (2 s)…');
    await Promise.all(Array.from({ length: producers }, () => loop(false)));
    log(`appending for ${duration} s with ${producers} producers × ${batch} events…`);
    const meter = cpuMeter(process.pid);
    const started = performance.now();
    stopAt = started + duration * 1000;
    await Promise.all(Array.from({ length: producers }, () => loop(true)));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    result.appends = {
      appended,
      seconds: round(seconds, 2),
      appends_per_second: round(appended / seconds),
      request_latency_p50_ms: round(quantile(latencies, 0.5), 1),
      request_latency_p99_ms: round(quantile(latencies, 0.99), 1),
      cpu: meter.stop(appended),
    };
    log(`appends: ${result.appends.appends_per_second}/s, request p99 ${result.appends.request_latency_p99_ms} ms`);

    // 2. Proofs with one anchor, then with many more.
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    const { rows: sample } = await pg.query(`SELECT entry_id, application_id FROM audit_chain.entries ORDER BY random() LIMIT ${proofCount}`);
    const timeProofs = async () => {
      const times = [];
      for (const row of sample) {
        const t0 = performance.now();
        await send(AUDIT_INCLUSION_PROOF, { application_id: row.application_id, entry_id: row.entry_id });
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return { proofs: times.length, mean_ms: round(times.reduce((a, b) => a + b, 0) / times.length, 3), p99_ms: round(quantile(times, 0.99), 3) };
    };
    const first = await send(AUDIT_ANCHOR_NOW, {});
    const withOne = await timeProofs();
    log(`inclusion proofs with 1 anchor: mean ${withOne.mean_ms} ms`);
    log(`making ${extraAnchors} more anchors…`);
    for (let i = 0; i < extraAnchors; i++) {
      await send(AUDIT_APPEND, { source: 'bench', events: eventBatch(1) });
      await send(AUDIT_ANCHOR_NOW, {});
    }
    const withMany = await timeProofs();
    log(`inclusion proofs with ${extraAnchors + 1} anchors: mean ${withMany.mean_ms} ms`);
    const consistencyTimes = [];
    const { rows: sizes } = await pg.query(`SELECT tree_size FROM audit_chain.anchors ORDER BY random() LIMIT 200`);
    for (const { tree_size: size } of sizes) {
      const t0 = performance.now();
      await send(AUDIT_CONSISTENCY_PROOF, { from_size: Math.min(Number(size), first.tree_size), to_size: Number(size) });
      consistencyTimes.push(performance.now() - t0);
    }
    consistencyTimes.sort((a, b) => a - b);
    await pg.end();
    result.proofs = {
      tree_size: first.tree_size + extraAnchors,
      inclusion_with_1_anchor: withOne,
      [`inclusion_with_${extraAnchors + 1}_anchors`]: withMany,
      consistency_between_anchors: { proofs: consistencyTimes.length, mean_ms: round(consistencyTimes.reduce((a, b) => a + b, 0) / consistencyTimes.length, 3), p99_ms: round(quantile(consistencyTimes, 0.99), 3) },
    };
  } finally {
    await bench.close();
  }
  const file = writeResult(result.date, 'audit', result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`written to ${path.relative(process.cwd(), file)}`);
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
