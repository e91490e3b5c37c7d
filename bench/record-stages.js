/**
 * A probe for finding out where a Record API request's time goes in the decisions service: preloaded
 * into the service process (`node bench/records.js --record-stages <file>`, or `node --require
 * ./bench/record-stages.js …` with RECORD_STAGES_FILE set), it times, from the call to the settled
 * promise,
 * - `request`: RecordConsent.execute, the decisions service's whole handling of one request (the
 *   capture rules, then the writer);
 * - `writer`: RecordWriter.write, from a request joining the writer's queue to its answer (the wait
 *   for the batch in flight, then its own batch);
 * - `batch_people_stage`: one batch's people stage (RecordWriter.prepare: the capture rules and the
 *   lookup and claim of every group; the write follows in the other stage);
 * - `lookup_and_claim`: ImportBatch.knownAndClaimed (the people already recorded and the directory's
 *   claim of the new ones, for a batch against a remembered flow version);
 * - `write`: ImportBatch.record (the batch's statement, or its transaction);
 * and samples the event loop's delay (`monitorEventLoopDelay`, 1 ms resolution). `requests_per_batch`
 * is `writer` calls per `batch_people_stage`. It writes them to `<file>.exit.json` when the process exits, and to
 * `<file>.phase<N>.json` whenever it gets SIGUSR2 (then they start again from zero). It changes
 * nothing else; it is not part of the service.
 */
const fs = require('node:fs');
const path = require('node:path');
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');

const file = process.env.RECORD_STAGES_FILE;
const decisions = path.join(__dirname, '..', 'apps', 'decisions', 'dist', 'records');
/** Samples kept per stage for the percentiles (the mean counts every call). */
const KEPT = 200_000;

let stages = new Map();
let loop;
let phase = 0;

function timed(key, started) {
  let stage = stages.get(key);
  if (!stage) stages.set(key, (stage = { count: 0, totalMs: 0, samples: [] }));
  const elapsed = performance.now() - started;
  stage.count += 1;
  stage.totalMs += elapsed;
  if (stage.samples.length < KEPT) stage.samples.push(elapsed);
}

function wrap(prototype, method, key) {
  const original = prototype[method];
  if (typeof original !== 'function') throw new Error(`record-stages: ${method} is not a method any more; update the probe`);
  prototype[method] = function timedMethod(...args) {
    const started = performance.now();
    const result = original.apply(this, args);
    const map = stages;
    const done = () => map === stages && timed(key, started);
    if (result && typeof result.then === 'function') result.then(done, done);
    else done();
    return result;
  };
}

const round = (ms) => Math.round(ms * 100) / 100;

function dump(label) {
  if (!file) return;
  const out = {};
  for (const [key, stage] of stages) {
    const sorted = stage.samples.sort((a, b) => a - b);
    const at = (q) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
    out[key] = { count: stage.count, mean_ms: round(stage.totalMs / stage.count), p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99) };
  }
  if (out.writer && out.batch_people_stage) out.requests_per_batch = round(out.writer.count / out.batch_people_stage.count);
  out.event_loop_delay_ms = { mean: round(loop.mean / 1e6), p50: round(loop.percentile(50) / 1e6), p99: round(loop.percentile(99) / 1e6), max: round(loop.max / 1e6) };
  fs.writeFileSync(`${file}.${label}.json`, `${JSON.stringify(out, null, 2)}\n`);
}

// Only in the embedded service process (not in a process it starts, should one inherit the flag).
if (file && /start-embedded/.test(process.argv[1] ?? '')) {
  require('reflect-metadata');
  const { RecordConsent } = require(path.join(decisions, 'record-consent.js'));
  const { RecordWriter } = require(path.join(decisions, 'record-writer.js'));
  const { ImportBatch } = require(path.join(decisions, 'import-batch.js'));
  wrap(RecordConsent.prototype, 'execute', 'request');
  wrap(RecordWriter.prototype, 'write', 'writer');
  // One people stage per batch (the writer's two stages: the next batch's people found while one writes).
  wrap(RecordWriter.prototype, 'prepare', 'batch_people_stage');
  wrap(ImportBatch.prototype, 'knownAndClaimed', 'lookup_and_claim');
  wrap(ImportBatch.prototype, 'record', 'write');
  loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('SIGUSR2', () => {
    dump(`phase${phase++}`);
    stages = new Map();
    loop.reset();
  });
  process.on('exit', () => dump('exit'));
}
