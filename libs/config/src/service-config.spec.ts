import { ConfigError, DecisionsEnvironment, GatewayEnvironment, loadConfig, ReceiptsEnvironment, ResidencyRouterEnvironment, ServiceEnvironment } from './service-config';

const valid = {
  COUNTRY: 'us',
  REGION: 'dev',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/dcr_us',
  NATS_URL: 'nats://127.0.0.1:4222',
  SUBJECT_REF_KEY: 'k'.repeat(32),
  // The gateway's production key (other services ignore it).
  FIELD_RENDER_PROOF_KEY: Buffer.alloc(32, 3).toString('base64'),
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

describe('GatewayEnvironment: the consent field render proof key', () => {
  const variablesOf = (env: Record<string, string | undefined>) => {
    try {
      loadConfig(GatewayEnvironment, env, 'gateway');
    } catch (error) {
      return (error as ConfigError).variables;
    }
    return [];
  };

  it('needs FIELD_RENDER_PROOF_KEY in production and checks its shape wherever it is set', () => {
    expect(variablesOf({ ...valid, FIELD_RENDER_PROOF_KEY: undefined })).toEqual(['FIELD_RENDER_PROOF_KEY']);
    expect(variablesOf({ ...valid, NODE_ENV: 'development', FIELD_RENDER_PROOF_KEY: undefined })).toEqual([]);
    expect(variablesOf({ ...valid, NODE_ENV: 'test', FIELD_RENDER_PROOF_KEY: 'c2hvcnQ=' })).toEqual(['FIELD_RENDER_PROOF_KEY']);
    expect(loadConfig(GatewayEnvironment, valid).FIELD_RENDER_PROOF_KEY).toBe(valid.FIELD_RENDER_PROOF_KEY);
  });
});

describe('DecisionsEnvironment: hosted form-builder connections', () => {
  const variablesOf = (env: Record<string, string>) => {
    try {
      loadConfig(DecisionsEnvironment, env, 'decisions');
    } catch (error) {
      return (error as ConfigError).variables;
    }
    return [];
  };

  it('needs PUBLIC_BASE_URL in production, where every receipt mail links to the records page', () => {
    const production = { ...valid, SMTP_URL: 'smtp://mail.example.com', FORM_CONNECTION_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
    expect(variablesOf({ ...production, PUBLIC_BASE_URL: undefined as unknown as string })).toEqual(['PUBLIC_BASE_URL']);
    expect(variablesOf({ ...production, PUBLIC_BASE_URL: 'https://us.example.com/path' })).toEqual(['PUBLIC_BASE_URL']);
    expect(variablesOf({ ...production, NODE_ENV: 'development', PUBLIC_BASE_URL: undefined as unknown as string })).toEqual([]);
    const receiptsVariables = (env: Record<string, string>) => {
      try {
        loadConfig(ReceiptsEnvironment, env, 'receipts');
      } catch (error) {
        return (error as ConfigError).variables;
      }
      return [];
    };
    const key = JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'x', d: 'd' });
    expect(receiptsVariables({ ...valid, RECEIPT_SIGNING_KEY: key })).toEqual(['PUBLIC_BASE_URL']);
    expect(receiptsVariables({ ...valid, RECEIPT_SIGNING_KEY: key, PUBLIC_BASE_URL: 'https://us.example.com' })).toEqual([]);
  });

  it('takes PUBLIC_BASE_URL as the origin a browser reaches: a host outside ASCII in punycode, lower-cased, without its default port', () => {
    // Receipts name it in `$schema` and `withdrawal_method`, which their schema asks to be URIs (RFC 3986).
    const test = { ...valid, NODE_ENV: 'test' };
    for (const shape of [DecisionsEnvironment, ReceiptsEnvironment, GatewayEnvironment]) {
      expect(loadConfig(shape as new () => { PUBLIC_BASE_URL?: string }, { ...test, PUBLIC_BASE_URL: 'https://de.Bücher.example' }).PUBLIC_BASE_URL).toBe('https://de.xn--bcher-kva.example');
      expect(loadConfig(shape as new () => { PUBLIC_BASE_URL?: string }, { ...test, PUBLIC_BASE_URL: 'https://US.Example.com:443' }).PUBLIC_BASE_URL).toBe('https://us.example.com');
      expect(() => loadConfig(shape as new () => object, { ...test, PUBLIC_BASE_URL: 'https://bücher.example/pfad' })).toThrow(/PUBLIC_BASE_URL must be an http\(s\) origin without a path/);
    }
  });

  it('refuses the development mailbox in production (no mail would be sent, every address and code kept in a table)', () => {
    const production = { ...valid, SMTP_URL: 'smtp://mail.example.com', PUBLIC_BASE_URL: 'https://us.example.com', FORM_CONNECTION_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
    expect(variablesOf({ ...production, MAIL_TRANSPORT: 'mailbox' })).toEqual(['MAIL_TRANSPORT']);
    expect(variablesOf({ ...production, MAIL_TRANSPORT: 'smtp' })).toEqual([]);
    expect(variablesOf({ ...production, NODE_ENV: 'development', MAIL_TRANSPORT: 'mailbox' })).toEqual([]);
  });

  it('needs FORM_CONNECTION_SECRET_KEY in production and checks its shape wherever it is set', () => {
    expect(variablesOf({ ...valid, SMTP_URL: 'smtp://mail.example.com', PUBLIC_BASE_URL: 'https://us.example.com' })).toEqual(['FORM_CONNECTION_SECRET_KEY']);
    expect(variablesOf({ ...valid, NODE_ENV: 'development', FORM_CONNECTION_SECRET_KEY: 'too-short' })).toEqual(['FORM_CONNECTION_SECRET_KEY']);
    expect(variablesOf({ ...valid, NODE_ENV: 'development' })).toEqual([]);
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig(DecisionsEnvironment, { ...valid, SMTP_URL: 'smtp://mail.example.com', PUBLIC_BASE_URL: 'https://us.example.com', FORM_CONNECTION_SECRET_KEY: key }).FORM_CONNECTION_SECRET_KEY).toBe(key);
  });

  it("defaults Typeform's API and refuses a malformed base URL", () => {
    expect(loadConfig(DecisionsEnvironment, { ...valid, NODE_ENV: 'test' }).FORM_BUILDER_TYPEFORM_API_URL).toBe('https://api.typeform.com');
    expect(loadConfig(DecisionsEnvironment, { ...valid, NODE_ENV: 'test', FORM_BUILDER_TYPEFORM_API_URL: 'http://127.0.0.1:4567/typeform' }).FORM_BUILDER_TYPEFORM_API_URL).toBe(
      'http://127.0.0.1:4567/typeform',
    );
    for (const bad of ['api.typeform.com', 'https://api.typeform.com/', 'ftp://x', 'https://x?y=1']) {
      expect(variablesOf({ ...valid, NODE_ENV: 'test', FORM_BUILDER_TYPEFORM_API_URL: bad })).toEqual(['FORM_BUILDER_TYPEFORM_API_URL']);
    }
  });
});

describe('ResidencyRouterEnvironment: confirming a new person with the peers', () => {
  it('defaults to best effort within 2 s, and names a bad mode or timeout', () => {
    const config = loadConfig(ResidencyRouterEnvironment, valid);
    expect([config.DIRECTORY_CONFIRMATION, config.DIRECTORY_CONFIRM_TIMEOUT_MS]).toEqual(['best_effort', 2000]);
    const strict = loadConfig(ResidencyRouterEnvironment, { ...valid, DIRECTORY_CONFIRMATION: 'required', DIRECTORY_CONFIRM_TIMEOUT_MS: '500' });
    expect([strict.DIRECTORY_CONFIRMATION, strict.DIRECTORY_CONFIRM_TIMEOUT_MS]).toEqual(['required', 500]);
    expect(() => loadConfig(ResidencyRouterEnvironment, { ...valid, DIRECTORY_CONFIRMATION: 'sometimes' })).toThrow(/DIRECTORY_CONFIRMATION/);
    expect(() => loadConfig(ResidencyRouterEnvironment, { ...valid, DIRECTORY_CONFIRM_TIMEOUT_MS: '10' })).toThrow(/DIRECTORY_CONFIRM_TIMEOUT_MS/);
  });
});
