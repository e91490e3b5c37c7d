import { ConfigError, GatewayEnvironment, loadConfig } from './service-config';

const production = {
  COUNTRY: 'us',
  REGION: 'us',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/dcr_us',
  NATS_URL: 'nats://127.0.0.1:4222',
  SUBJECT_REF_KEY: 'k'.repeat(32),
  FIELD_RENDER_PROOF_KEY: Buffer.alloc(32, 3).toString('base64'),
};

const variablesOf = (env: Record<string, string | undefined>) => {
  try {
    loadConfig(GatewayEnvironment, env, 'gateway');
  } catch (error) {
    return (error as ConfigError).variables;
  }
  return [];
};

describe('GatewayEnvironment: TEMPLATE_PREVIEW_KEY', () => {
  it('is optional everywhere, production included (the gateway derives it from the render proof key)', () => {
    expect(variablesOf(production)).toEqual([]);
    expect(loadConfig(GatewayEnvironment, production).TEMPLATE_PREVIEW_KEY).toBeUndefined();
    expect(variablesOf({ ...production, NODE_ENV: 'development', FIELD_RENDER_PROOF_KEY: undefined })).toEqual([]);
  });

  it('must be 32 bytes, base64, when set', () => {
    const key = Buffer.alloc(32, 4).toString('base64');
    expect(loadConfig(GatewayEnvironment, { ...production, TEMPLATE_PREVIEW_KEY: key }).TEMPLATE_PREVIEW_KEY).toBe(key);
    for (const bad of ['c2hvcnQ=', Buffer.alloc(48, 4).toString('base64'), 'not base64 at all, but long enough to look like a key=']) {
      expect(variablesOf({ ...production, TEMPLATE_PREVIEW_KEY: bad })).toEqual(['TEMPLATE_PREVIEW_KEY']);
    }
  });
});
