import { ConfigError, GatewayEnvironment, loadConfig, ServiceEnvironment } from './service-config';

const valid = {
  COUNTRY: 'us',
  REGION: 'dev',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/dcr_us',
  NATS_URL: 'nats://127.0.0.1:4222',
  SUBJECT_REF_KEY: 'k'.repeat(32),
};

describe('loadConfig', () => {
  it('normalises and types a valid environment', () => {
    const config = loadConfig(GatewayEnvironment, { ...valid, PORT: '9090', PEER_COUNTRIES: 'de, fr' });
    expect(config.COUNTRY).toBe('US');
    expect(config.PORT).toBe(9090);
    expect(config.PEER_COUNTRIES).toEqual(['DE', 'FR']);
    expect(config.TRANSPORT).toBe('nats');
    expect(config.RATE_LIMIT_RPS).toBe(100);
  });

  it.each([
    ['COUNTRY', { COUNTRY: 'usa' }],
    ['REGION', { REGION: 'Dev-1' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['NATS_URL', { NATS_URL: 'http://x' }],
    ['SUBJECT_REF_KEY', { SUBJECT_REF_KEY: 'short' }],
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['TRANSPORT', { TRANSPORT: 'kafka' }],
  ])('names %s when it is invalid', (variable, override) => {
    let thrown: unknown;
    try {
      loadConfig(GatewayEnvironment, { ...valid, ...override }, 'gateway');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variables).toEqual([variable]);
    expect((thrown as ConfigError).message).toContain(`${variable}:`);
    expect((thrown as ConfigError).message).toContain('gateway');
  });

  it('names a missing variable', () => {
    const { DATABASE_URL: _omitted, ...rest } = valid;
    expect(() => loadConfig(ServiceEnvironment, rest)).toThrow(/DATABASE_URL: .*must be set/);
  });

  it('does not need NATS_URL with the in-process transport', () => {
    const { NATS_URL: _omitted, ...rest } = valid;
    expect(loadConfig(ServiceEnvironment, { ...rest, TRANSPORT: 'inprocess' }).NATS_URL).toBeUndefined();
  });
});
