#!/usr/bin/env node
/**
 * Receipts benchmark (issue 6), per country: `GET /api/v1/consent_receipts/<record_id>?flavor=…`
 * for the canonical and signed flavors (and dpv, for reference) at saturation, then at half the
 * measured rate, evenly paced, for the p99.
 *
 *   node bench/receipts.js [--mode embedded|distributed] [--duration 10] [--connections 32] [--records 500]
 *
 * The country pair is started with the repository's own start command (bench/lib.js). A pool of
 * `--records` consent decisions is walked to completion and exchanged for their record ids; every
 * request then asks for one of them in turn (autocannon's `setupRequest`), with the development
 * API token. Results are printed and written to bench/results/<timestamp>-receipts-<mode>.json.
 */
const { performance } = require('node:perf_hooks');
const autocannon = require('autocannon');
const { option, startCountryPair, machine, source, writeResult, cpuMeter } = require('./lib');
const { call, informedFlow, completedPool, summary, warnIfFailed, paced, log } = require('./decisions');

const mode = option('mode', 'embedded');
const duration = Number(option('duration', '10'));
const connections = Number(option('connections', '32'));
const records = Number(option('records', '500'));

async function main() {
  const measuredSource = source();
  const service = await startCountryPair({ mode });
  const result = { date: new Date().toISOString(), mode, machine: machine(), source: measuredSource, load: { connections, duration_s: duration, records, endpoint: 'US' }, flavors: {} };
  try {
    const { credentials } = service;
    const base = credentials.endpoints.US;
    const auth = { authorization: `Bearer ${credentials.api_token}` };
    const flowId = await informedFlow(base, credentials);
    const { pool } = await completedPool(base, credentials, flowId, records);
    const ids = [];
    for (const entry of pool) {
      const exchanged = await call(base, 'POST', `/api/v1/decisions/${entry.session_token}/exchange`, { token: credentials.api_token, body: { exchange_token: entry.consent_token } });
      ids.push(exchanged.record_id);
    }
    // Receipts are frozen from the decision events a few milliseconds after the commit.
    for (const id of [ids[0], ids[ids.length - 1]]) {
      for (let i = 0; i < 100; i++) {
        const answer = await fetch(`${base}/api/v1/consent_receipts/${id}`, { headers: auth });
        if (answer.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    for (const flavor of ['canonical', 'signed', 'dpv']) {
      let next = 0;
      const nextPath = () => `/api/v1/consent_receipts/${ids[next++ % ids.length]}?flavor=${flavor}`;
      const options = { url: base, connections, headers: auth, requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: nextPath() }) }] };
      log(`${flavor}: warm-up (3 s)`);
      await autocannon({ ...options, duration: 3 });
      log(`${flavor}: saturation, ${connections} connections, ${duration} s`);
      const meter = cpuMeter(service.child.pid);
      const saturation = await autocannon({ ...options, duration });
      warnIfFailed(`${flavor} saturation`, saturation);
      const cpu = meter.stop(saturation.requests.total);
      const rate = Math.round(saturation.requests.total / duration);
      const half = Math.max(1, Math.round(rate / 2));
      log(`${flavor}: ${rate} req/s; evenly paced ${half}/s for ${duration} s`);
      const pacedRun = await paced({ base, rate: half, total: half * duration, next: () => ({ method: 'GET', path: nextPath(), headers: auth }) });
      result.flavors[flavor] = { saturation: { ...summary(saturation), cpu }, requests_per_second: rate, half_rate_paced: pacedRun };
    }
    result.targets = { signed_per_second: 2000, canonical_per_second: 4000, p99_ms_at_half_load: 50 };
  } finally {
    await service.close();
  }
  const file = writeResult(result.date, `receipts-${mode}`, result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`written to ${file}`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
