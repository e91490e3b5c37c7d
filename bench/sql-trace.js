/**
 * A probe for finding out which SQL a request runs, and how long each statement takes: preloaded
 * into the service process (`node --require ./bench/sql-trace.js …`, or `node bench/decisions.js
 * --sql-trace <file>`), it counts every statement sent through `pg` by connection (application_name,
 * e.g. `us/decisions`) and statement text, with the time from the call to its answer (`total_ms`,
 * `mean_ms`, `max_ms`: the round trip, the statement's execution and, for a statement outside a
 * transaction, its commit; also any wait behind an earlier query on the same connection), and writes
 * them to SQL_TRACE_FILE as JSON when the process exits, or whenever it gets SIGUSR2 (then they start
 * again from zero, to measure one phase). It changes nothing else; it is not part of the service.
 */
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const pg = require('pg');

const file = process.env.SQL_TRACE_FILE;
let counts = new Map();
let phase = 0;

function record(key, started) {
  const row = counts.get(key);
  const elapsed = performance.now() - started;
  row.totalMs += elapsed;
  if (elapsed > row.maxMs) row.maxMs = elapsed;
}

const original = pg.Client.prototype.query;
pg.Client.prototype.query = function tracedQuery(config, ...rest) {
  const text = typeof config === 'string' ? config : config?.text;
  if (!text) return original.call(this, config, ...rest);
  const key = `${this.connectionParameters?.application_name ?? '?'}\t${text.replace(/\s+/g, ' ').replace(/\$\d+(, \$\d+)+/g, '$n, …').slice(0, 240)}`;
  let row = counts.get(key);
  if (!row) counts.set(key, (row = { count: 0, totalMs: 0, maxMs: 0 }));
  row.count += 1;
  const started = performance.now();
  const map = counts;
  const done = () => map === counts && record(key, started);
  const callbackAt = rest.findIndex((arg) => typeof arg === 'function');
  if (callbackAt >= 0) {
    const callback = rest[callbackAt];
    rest[callbackAt] = function timedCallback(...args) {
      done();
      return callback.apply(this, args);
    };
    return original.call(this, config, ...rest);
  }
  if (typeof config?.callback === 'function') {
    const callback = config.callback;
    config.callback = function timedCallback(...args) {
      done();
      return callback.apply(this, args);
    };
    return original.call(this, config, ...rest);
  }
  const result = original.call(this, config, ...rest);
  if (result && typeof result.then === 'function') result.then(done, done);
  return result;
};

const round = (ms) => Math.round(ms * 100) / 100;

function dump(label) {
  if (!file) return;
  const rows = [...counts].sort((a, b) => b[1].count - a[1].count).map(([key, row]) => {
    const [connection, sql] = key.split('\t');
    return { connection, count: row.count, total_ms: round(row.totalMs), mean_ms: round(row.totalMs / row.count), max_ms: round(row.maxMs), sql };
  });
  fs.writeFileSync(`${file}.${label}.json`, `${JSON.stringify(rows, null, 2)}\n`);
}

process.on('SIGUSR2', () => {
  dump(`phase${phase++}`);
  counts = new Map();
});
process.on('exit', () => dump('exit'));
