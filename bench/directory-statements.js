#!/usr/bin/env node
/**
 * The residency directory's statements on a Record API batch (issue 7), measured as PostgreSQL's CPU
 * per statement: one connection runs each kind `--batches` times in a row, and the CPU its backend
 * process used (/proc/<pid>/stat, Linux) is divided by that count. A backend's own CPU, unlike
 * throughput on a shared host, barely moves with what else the machine is doing.
 *
 * Kinds, each on batches of `--people` new people as the Record API registered them until the
 * twenty-first session (an e-mail address and the id made for the person: two references each;
 * since then a person's id names its home country and only the address is registered), committed
 * on their own as the service commits them:
 * - register_many: the general registration (any number of references per person, each looked
 *   up), planned per call: how the Record API's people were registered until the sixteenth session;
 * - insert_new_people: the e-mail address inserted unless known, the id with it, a kept plan;
 * - merge_unnamed / merge_named: the peer's merge of the same entries, parsed and planned per call
 *   (as before the fifteenth session) or as a named statement;
 * - confirm_named: the peer's answer to a confirmation of the same entries (since the twenty-ninth
 *   session): the same merge answering the rows it wrote, committed without waiting for the flush.
 *
 *   node bench/directory-statements.js [--batches 3000] [--people 9] [--rounds 3]
 *
 * The statements are the built repository's (apps/residency-router/dist); the schema is the
 * service's, migrated into a fresh database (DATABASE_URL's server when set, else an embedded
 * PostgreSQL as `npm start` runs it; its backend must be readable in /proc, as it is for root or the
 * server's own user). Results go to bench/results/<timestamp>-directory-statements.json.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const { Client } = require('pg');
const { option, machine, source, writeResult } = require('./lib');
const { startBenchService } = require('./bench-database');

const batches = Number(option('batches', '3000'));
const people = Number(option('people', '9'));
const rounds = Number(option('rounds', '3'));

/** CPU time (user + system) of a process so far, in ms. */
function processCpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

async function main() {
  const measuredSource = source();
  const { residencyRouterService } = require('../apps/residency-router/dist');
  const { DIRECTORY_STATEMENTS } = require('../apps/residency-router/dist/directory/directory.repository');
  const { ServiceEnvironment } = require('../libs/config/dist');
  const bench = await startBenchService({ label: 'directory', definition: residencyRouterService, environment: ServiceEnvironment });
  const client = new Client({ connectionString: bench.db.url });
  await client.connect();
  const result = { date: new Date().toISOString(), machine: machine(), source: measuredSource, database: bench.db.kind, load: { batches, people, rounds }, rounds: [] };
  try {
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // Per person: the e-mail address's reference, then the id's.
    const references = () => Array.from({ length: 2 * people }, () => crypto.randomBytes(32).toString('hex'));
    const emails = (refs) => refs.filter((_, i) => i % 2 === 0);
    const ids = (refs) => refs.filter((_, i) => i % 2 === 1);
    const kinds = {
      register_many: (refs) => ({ text: DIRECTORY_STATEMENTS.registerMany.text, values: [refs, refs.map((_, i) => Math.floor(i / 2)), 'US', new Date()] }),
      insert_new_people: (refs) => ({ name: 'bench_insert_new_people', text: DIRECTORY_STATEMENTS.insertNewPeople.text, values: [emails(refs), emails(refs), ids(refs), 'US', new Date()] }),
      merge_unnamed: (refs) => ({ text: DIRECTORY_STATEMENTS.mergeFromPeer.text, values: [refs, refs.map(() => 'DE'), refs.map(() => 'active'), refs.map(() => new Date())] }),
      merge_named: (refs) => ({ name: 'bench_merge', text: DIRECTORY_STATEMENTS.mergeFromPeer.text, values: [refs, refs.map(() => 'DE'), refs.map(() => 'active'), refs.map(() => new Date())] }),
      confirm_named: (refs) => ({ name: 'bench_confirm', text: DIRECTORY_STATEMENTS.mergeAndAnswer.text, values: [refs, refs.map(() => 'DE'), refs.map(() => 'active'), refs.map(() => new Date())] }),
    };
    for (let round = 0; round < rounds; round++) {
      const row = {};
      for (const [kind, statement] of Object.entries(kinds)) {
        const before = processCpuMs(backend);
        for (let i = 0; i < batches; i++) await client.query(statement(references()));
        row[kind] = { postgres_cpu_us_per_batch: Math.round((1000 * (processCpuMs(backend) - before)) / batches) };
      }
      result.rounds.push(row);
      process.stdout.write(`round ${round + 1}: ${Object.entries(row).map(([kind, r]) => `${kind} ${r.postgres_cpu_us_per_batch} µs`).join(', ')}\n`);
    }
  } finally {
    await client.end();
    await bench.close();
  }
  const file = writeResult(result.date, 'directory-statements', result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\nwritten to ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
