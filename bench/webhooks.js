#!/usr/bin/env node
/**
 * Webhooks benchmark (issue 5), per country: the webhooks service (built code, in this process,
 * in-process transport, as the embedded default runs it) against a fresh database, delivering to a
 * fast local receiver (bench/webhook-receiver.js, its own process, answers 200 at once).
 *
 * 1. throughput: `--backlog` events are queued at once (one delivery each, `webhooks.enqueue` in
 *    batches of 500, as the outbox relays send them) and the time until the receiver has seen every
 *    one gives deliveries/s (the whole path: claim, sign, POST, record the outcome).
 * 2. latency: events queued evenly at `--rate` per second for `--duration` seconds; for each, the
 *    time from its occurred_at (when the producer's outbox handed it over) to its first arrival at
 *    the receiver.
 *
 *   node bench/webhooks.js [--backlog 20000] [--rate 500] [--duration 10]
 *
 * The database: DATABASE_URL's server when set (a fresh database, dropped afterwards), else an
 * embedded PostgreSQL in a temporary folder, as `npm start` runs it. Results are printed and written
 * to bench/results/<timestamp>-webhooks.json.
 */
const crypto = require('node:crypto');
const { fork } = require('node:child_process');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { option, machine, source, writeResult, cpuMeter } = require('./lib');
const { startBenchService } = require('./bench-database');

const backlog = Number(option('backlog', '20000'));
const rate = Number(option('rate', '500'));
const duration = Number(option('duration', '10'));

const log = (line) => process.stderr.write(`${line}\n`);
const round = (n, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
const APPLICATION = 'tp_dev_0123456789abcdef';

function event() {
  return {
    id: `evt_${crypto.randomBytes(10).toString('hex')}`,
    type: 'consent.granted',
    application_id: APPLICATION,
    occurred_at: new Date().toISOString(),
    data: { session_id: `dts_us${crypto.randomBytes(15).toString('hex')}`, kind: 'consent', outcome: 'granted', flow_id: 'flw_dev_0123456789abcdef' },
  };
}

function ask(child, message, key) {
  return new Promise((resolve) => {
    const listener = (reply) => {
      if (key in reply) {
        child.off('message', listener);
        resolve(reply);
      }
    };
    child.on('message', listener);
    child.send(message);
  });
}

async function main() {
  const { webhooksService } = require('../apps/webhooks/dist');
  const { WebhooksEnvironment } = require('../libs/config/dist');
  const { WEBHOOKS_CREATE, WEBHOOKS_ENQUEUE } = require('../libs/contracts/dist');

  const receiver = fork(path.join(__dirname, 'webhook-receiver.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => receiver.once('message', resolve));
  const bench = await startBenchService({ label: 'webhooks', definition: webhooksService, environment: WebhooksEnvironment });
  const { db, env, send } = bench;
  const result = { date: new Date().toISOString(), machine: machine(), source: source(), database: db.kind, settings: { backlog, rate, duration, concurrency: env.WEBHOOK_CONCURRENCY, db_pool_size: env.DB_POOL_SIZE } };
  const waitFor = async (count, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stats = await ask(receiver, 'stats', 'requests');
      if (Object.keys(stats.firstSeen).length >= count || Date.now() > deadline) return stats;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    await send(WEBHOOKS_CREATE, {
      application_id: APPLICATION,
      environment: 'sandbox',
      url: `http://127.0.0.1:${port}/hook`,
      events: ['consent.granted'],
      actor: { type: 'operator' },
    });
    log('warming up (2,000 deliveries)…');
    for (let i = 0; i < 4; i++) await send(WEBHOOKS_ENQUEUE, { events: Array.from({ length: 500 }, event) });
    await waitFor(2000, 60_000);
    await ask(receiver, 'reset', 'reset');

    // 1. Throughput from a backlog.
    log(`throughput: ${backlog} events queued at once…`);
    const meter = cpuMeter(process.pid);
    const started = performance.now();
    for (let queued = 0; queued < backlog; queued += 500) {
      await send(WEBHOOKS_ENQUEUE, { events: Array.from({ length: Math.min(500, backlog - queued) }, event) });
    }
    const enqueuedIn = (performance.now() - started) / 1000;
    const stats = await waitFor(backlog, 300_000);
    const seconds = (performance.now() - started) / 1000;
    const delivered = Object.keys(stats.firstSeen).length;
    result.throughput = {
      events: backlog,
      delivered,
      requests: stats.requests,
      queued_in_s: round(enqueuedIn, 2),
      seconds: round(seconds, 2),
      deliveries_per_second: round(delivered / seconds),
      cpu: meter.stop(delivered),
    };
    log(`throughput: ${result.throughput.deliveries_per_second} deliveries/s`);
    await ask(receiver, 'reset', 'reset');

    // 2. Latency at a steady rate.
    log(`latency: ${rate} events/s for ${duration} s…`);
    const occurred = new Map();
    const total = rate * duration;
    const tick = 10;
    const perTick = rate / (1000 / tick);
    const start = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + Math.ceil(perTick));
      if (due > sent) {
        const batch = Array.from({ length: due - sent }, event);
        for (const item of batch) occurred.set(item.id, Date.parse(item.occurred_at));
        sent = due;
        void send(WEBHOOKS_ENQUEUE, { events: batch });
      }
      await new Promise((resolve) => setTimeout(resolve, tick));
    }
    const latencyStats = await waitFor(total, 120_000);
    const delays = Object.entries(latencyStats.firstSeen)
      .filter(([id]) => occurred.has(id))
      .map(([id, at]) => at - occurred.get(id))
      .sort((a, b) => a - b);
    result.latency = {
      events: total,
      delivered: delays.length,
      rate,
      event_to_first_attempt_p50_ms: quantile(delays, 0.5),
      event_to_first_attempt_p99_ms: quantile(delays, 0.99),
      event_to_first_attempt_max_ms: delays[delays.length - 1],
    };
    log(`latency: p50 ${result.latency.event_to_first_attempt_p50_ms} ms, p99 ${result.latency.event_to_first_attempt_p99_ms} ms`);
  } finally {
    await bench.close();
    receiver.kill();
  }
  const file = writeResult(result.date, 'webhooks', result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`written to ${path.relative(process.cwd(), file)}`);
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
