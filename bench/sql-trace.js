/**
 * A probe for finding out which SQL a request runs: preloaded into the service process
 * (`node --require ./bench/sql-trace.js …`, or `node bench/decisions.js --sql-trace <file>`), it
 * counts every statement sent through `pg` by connection (application_name, e.g. `us/decisions`)
 * and statement text, and writes the counts to SQL_TRACE_FILE as JSON when the process exits, or
 * whenever it gets SIGUSR2 (then the counts start again from zero, to measure one phase).
 * It changes nothing else; it is not part of the service.
 */
const fs = require('node:fs');
const pg = require('pg');

const file = process.env.SQL_TRACE_FILE;
let counts = new Map();
let phase = 0;

const original = pg.Client.prototype.query;
pg.Client.prototype.query = function tracedQuery(config, ...rest) {
  const text = typeof config === 'string' ? config : config?.text;
  if (text) {
    const key = `${this.connectionParameters?.application_name ?? '?'}\t${text.replace(/\s+/g, ' ').replace(/\$\d+(, \$\d+)+/g, '$n, …').slice(0, 240)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return original.call(this, config, ...rest);
};

function dump(label) {
  if (!file) return;
  const rows = [...counts].sort((a, b) => b[1] - a[1]).map(([key, count]) => {
    const [connection, sql] = key.split('\t');
    return { connection, count, sql };
  });
  fs.writeFileSync(`${file}.${label}.json`, `${JSON.stringify(rows, null, 2)}\n`);
}

process.on('SIGUSR2', () => {
  dump(`phase${phase++}`);
  counts = new Map();
});
process.on('exit', () => dump('exit'));
