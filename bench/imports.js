#!/usr/bin/env node
/**
 * Import benchmark (issue 7): one `POST /api/v1/consent_records/imports` of `--rows` rows (10,000 by
 * default), first as a dry run, then for real, against the US endpoint of a country pair started
 * with the repository's start command (bench/lib.js). Then a re-sync (`resync`): the same people
 * again with changed decisions, as an organisation re-importing from its CRM would send them, so
 * every row supersedes the record of the first import and withdraws what moved from granted to
 * declined. Reports the wall time of each request.
 *
 *   node bench/imports.js [--mode embedded|distributed] [--rows 10000]
 */
const { performance } = require('node:perf_hooks');
const { option, startCountryPair, machine, source, writeResult, cpuMeter } = require('./lib');
const { capturableFlow, log } = require('./decisions');

const mode = option('mode', 'embedded');
const rowCount = Number(option('rows', '10000'));

async function main() {
  const measuredSource = source();
  const service = await startCountryPair({ mode });
  const result = { date: new Date().toISOString(), mode, machine: machine(), source: measuredSource, rows: rowCount };
  try {
    const { credentials } = service;
    const base = credentials.endpoints.US;
    const token = credentials.api_token;
    const flowId = await capturableFlow(base, credentials, 'Legacy signup form');
    const records = Array.from({ length: rowCount }, (_, i) => ({
      subject: { email: `legacy-${i}@example.com`, external_id: `legacy-${i}` },
      decisions: { newsletter: { decision: i % 3 ? 'granted' : 'declined' }, analytics: { decision: i % 2 ? 'granted' : 'declined' }, fraud: { decision: 'granted' } },
      captured_at: new Date(Date.UTC(2023, 0, 1) + i * 60_000).toISOString(),
      idempotency_key: `legacy-${i}`,
    }));
    // Every newsletter and analytics decision flipped: a third of the people lose their last granted
    // purpose but fraud's, the rest one or two purposes, so every predecessor gets a withdrawal.
    const resync = records.map((record, i) => ({
      ...record,
      decisions: { newsletter: { decision: i % 3 ? 'declined' : 'granted' }, analytics: { decision: i % 2 ? 'declined' : 'granted' }, fraud: { decision: 'declined' } },
      captured_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      idempotency_key: `legacy-${i}-resync`,
    }));
    for (const [phase, dryRun, rows] of [['dry_run', true, records], ['import', false, records], ['resync', false, resync]]) {
      log(`${phase} of ${rowCount} rows…`);
      const meter = cpuMeter(service.child.pid);
      const started = performance.now();
      const response = await fetch(`${base}/api/v1/consent_records/imports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ flow_id: flowId, dry_run: dryRun, records: rows }),
      });
      const body = await response.json();
      const seconds = (performance.now() - started) / 1000;
      const outcome = { status: response.status, seconds: Math.round(seconds * 100) / 100, rows_per_second: Math.round(rowCount / seconds), summary: body.summary, cpu: meter.stop(rowCount) };
      result[phase] = outcome;
      log(`${phase}: ${outcome.status} in ${outcome.seconds} s (${outcome.rows_per_second} rows/s), ${JSON.stringify(outcome.summary)}`);
    }
    result.target = { seconds_for_10000_rows: 10 };
  } finally {
    await service.close();
  }
  const file = writeResult(result.date, `imports-${mode}`, result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`written to ${file}`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
