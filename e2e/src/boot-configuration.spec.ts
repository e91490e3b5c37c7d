import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/** A service process with a bad environment stops before it listens, naming the variable. */
describe('configuration at boot', () => {
  const base = {
    COUNTRY: 'US',
    REGION: 'dev',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/never_used',
    NATS_URL: 'nats://127.0.0.1:4222',
    SUBJECT_REF_KEY: 'k'.repeat(32),
  };

  it.each([
    ['receipts', 'COUNTRY', { COUNTRY: 'USA' }],
    ['decisions', 'DATABASE_URL', { DATABASE_URL: 'mysql://db' }],
    ['gateway', 'PORT', { PORT: 'http' }],
    ['webhooks', 'NATS_URL', { NATS_URL: undefined }],
    ['oidc', 'SUBJECT_REF_KEY', { SUBJECT_REF_KEY: 'short' }],
    // Production (the default NODE_ENV) needs the signing and encryption keys.
    ['audit-chain', 'AUDIT_CHECKPOINT_KEY', {}],
    ['audit-chain', 'AUDIT_WITNESS_KEY', { NODE_ENV: 'development', AUDIT_WITNESS_KEY: 'not a key' }],
    ['audit-chain', 'ANCHOR_INTERVAL', { NODE_ENV: 'development', ANCHOR_INTERVAL: 'soon' }],
    ['webhooks', 'WEBHOOK_SECRET_KEY', {}],
    ['decisions', 'FORM_CONNECTION_SECRET_KEY', {}],
    ['receipts', 'RECEIPT_SIGNING_KEY', {}],
    ['webhooks', 'WEBHOOK_RETRY_WAITS', { NODE_ENV: 'development', WEBHOOK_RETRY_WAITS: '1s,2s' }],
  ])('%s exits 1 and names %s', (service, variable, override) => {
    const env: Record<string, string | undefined> = { PATH: process.env.PATH, ...base, ...override };
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'apps', service, 'dist', 'main.js')], {
      env: env as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`Invalid configuration for ${service}`);
    expect(result.stderr).toMatch(new RegExp(`^\\s+${variable}: `, 'm'));
  });
});
