import { existsSync, readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  compileFrameSchemas,
  createEnvelope,
  DecisionKind,
  FRAME_PROTOCOL_VERSION,
  FrameMessageType,
  MESSAGE_TYPES,
  payloadSchemaName,
  SCHEMA_BASE_URL,
  SCHEMA_NAMES,
  schemaPath,
  stepPosition,
  validateFrameMessage,
  validateFramePayload,
} from './index';

const NOW = '2025-03-01T12:00:00.000Z';
const DEADLINE = '2025-03-01T12:05:00.000Z';

const samples: Record<DecisionKind, Record<FrameMessageType, Record<string, unknown>>> = {
  consent: {
    'service:ready': { kind: 'consent', session_token: 'dts_abc', deadline_at: DEADLINE, branding: {}, mode: 'embed', locale: 'de-DE' },
    'service:state': { from: 'pending', to: 'authenticating', step_index: 1, total_steps: 5 },
    'service:complete': { outcome: 'granted', exchange_token: 'ct_123', completed_at: NOW },
    'service:cancel': { reason: 'user_cancelled', cancelled_by: 'user' },
    'service:error': { code: 'invalid_code', message: 'The code is wrong.', fatal: false, recoverable_via: 'sign_in' },
    'service:resize': { height: 640 },
    'service:deadline': { remaining_seconds: 30, level: 'warning', deadline_at: DEADLINE },
  },
  approval: {
    'service:ready': { kind: 'approval', session_token: 'dts_xyz', deadline_at: null, branding: { color: '#000' }, mode: 'popup', locale: 'en' },
    'service:state': { from: 'verifying', to: 'reviewing', kind_payload: { step_index: 3, total_steps: 5, action: 'refund' } },
    'service:complete': { outcome: 'countered', exchange_token: 'ct_456', completed_at: NOW },
    'service:cancel': { reason: 'host_closed', cancelled_by: 'host' },
    'service:error': { code: 'gone', message: 'Gone.', fatal: true, recoverable_via: null },
    'service:resize': { height: 0 },
    'service:deadline': { remaining_seconds: 0, level: 'expired', deadline_at: DEADLINE },
  },
};

function message(type: FrameMessageType, kind: DecisionKind, payload: Record<string, unknown> = samples[kind][type]) {
  return createEnvelope(type, kind, payload as never, { now: NOW }) as unknown as Record<string, unknown>;
}

function expectInvalid(candidate: unknown, fragment?: string) {
  const result = validateFrameMessage(candidate);
  expect(result.valid).toBe(false);
  if (!result.valid && fragment) expect(result.errors.join('\n')).toContain(fragment);
}

describe('schemas', () => {
  it('ships every schema as a real Draft 2020-12 file with a consistent $id', () => {
    for (const name of SCHEMA_NAMES) {
      const file = schemaPath(name);
      expect(existsSync(file)).toBe(true);
      const schema = JSON.parse(readFileSync(file, 'utf8'));
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.$id).toBe(`${SCHEMA_BASE_URL}${name}.json`);
      expect(schema.additionalProperties).toBe(false);
    }
  });

  it('compiles each schema on its own in a strict Ajv 2020 instance', () => {
    for (const name of SCHEMA_NAMES) {
      const ajv = new Ajv2020({ strict: true });
      addFormats(ajv);
      expect(() => ajv.compile(JSON.parse(readFileSync(schemaPath(name), 'utf8')))).not.toThrow();
    }
    expect(() => compileFrameSchemas()).not.toThrow();
  });

  it('resolves names with or without .json and refuses anything else', () => {
    expect(schemaPath('consent/state.json')).toBe(schemaPath('consent/state'));
    expect(() => schemaPath('../package')).toThrow(/Unknown/);
    expect(() => schemaPath('consent/ready')).toThrow(/Unknown/);
  });

  it('maps (type, kind) to the payload schema', () => {
    expect(payloadSchemaName('service:ready', 'approval')).toBe('ready');
    expect(payloadSchemaName('service:state', 'approval')).toBe('approval/state');
    expect(payloadSchemaName('service:deadline', 'consent')).toBe('consent/deadline');
  });
});

describe('createEnvelope', () => {
  it('builds the six-field envelope with a UUID v4 and an ISO UTC timestamp', () => {
    const env = createEnvelope('service:resize', 'consent', { height: 12 });
    expect(Object.keys(env).sort()).toEqual(['kind', 'message_id', 'payload', 'ts', 'type', 'version']);
    expect(env.version).toBe(FRAME_PROTOCOL_VERSION);
    expect(env.message_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(env.ts).toMatch(/Z$/);
    expect(createEnvelope('service:resize', 'consent', { height: 1 }).message_id).not.toBe(env.message_id);
    expect(createEnvelope('service:resize', 'consent', { height: 1 }, { now: 0, id: 'x' })).toMatchObject({ ts: '1970-01-01T00:00:00.000Z', message_id: 'x' });
  });
});

describe('validateFrameMessage', () => {
  for (const kind of ['consent', 'approval'] as const) {
    for (const type of MESSAGE_TYPES) {
      it(`accepts ${type} for ${kind}`, () => {
        expect(validateFrameMessage(message(type, kind))).toEqual({ valid: true });
      });
    }
  }

  it('accepts every deadline mark with the right level', () => {
    for (const remaining_seconds of [30, 15, 5]) {
      expect(validateFrameMessage(message('service:deadline', 'consent', { remaining_seconds, level: 'warning', deadline_at: DEADLINE })).valid).toBe(true);
    }
    expectInvalid(message('service:deadline', 'consent', { remaining_seconds: 0, level: 'warning', deadline_at: DEADLINE }));
    expectInvalid(message('service:deadline', 'consent', { remaining_seconds: 5, level: 'expired', deadline_at: DEADLINE }));
    expectInvalid(message('service:deadline', 'consent', { remaining_seconds: 10, level: 'warning', deadline_at: DEADLINE }));
  });

  it('rejects a wrong version', () => {
    expectInvalid({ ...message('service:resize', 'consent'), version: 1 }, '/version');
    expectInvalid({ ...message('service:resize', 'consent'), version: '2' }, '/version');
  });

  it('rejects wildcard and unknown types', () => {
    expectInvalid({ ...message('service:resize', 'consent'), type: 'service:*' }, '/type');
    expectInvalid({ ...message('service:resize', 'consent'), type: '*' }, '/type');
    expectInvalid({ ...message('service:resize', 'consent'), type: 'service:unknown' }, '/type');
    expectInvalid({ ...message('service:resize', 'consent'), kind: 'signature_request' }, '/kind');
  });

  it('rejects a missing envelope field', () => {
    for (const field of ['type', 'kind', 'version', 'payload', 'ts', 'message_id']) {
      const candidate = message('service:ready', 'consent');
      delete candidate[field];
      expectInvalid(candidate, field);
    }
  });

  it('rejects a missing payload field', () => {
    for (const field of ['from', 'to', 'step_index', 'total_steps']) {
      const payload: Record<string, unknown> = { ...samples.consent['service:state'] };
      delete payload[field];
      expectInvalid(message('service:state', 'consent', payload), field);
    }
    expectInvalid(message('service:error', 'approval', { code: 'x', message: 'y', fatal: true }), 'recoverable_via');
  });

  it('rejects extra fields in the envelope and in payloads', () => {
    expectInvalid({ ...message('service:resize', 'consent'), extra: 1 }, "unexpected property 'extra'");
    expectInvalid(message('service:resize', 'consent', { height: 5, width: 3 }), "unexpected property 'width'");
    expectInvalid(message('service:complete', 'consent', { ...samples.consent['service:complete'], claims: {} }), 'claims');
  });

  it('rejects a bad message_id', () => {
    for (const id of ['not-a-uuid', '123e4567-e89b-12d3-a456-426614174000' /* v1 */, '', 'c3f9a2de-5b1e-4c3a-9f1e-0c2b4d6e8f1']) {
      expectInvalid({ ...message('service:resize', 'consent'), message_id: id }, '/message_id');
    }
  });

  it('rejects a non-UTC or malformed timestamp', () => {
    expectInvalid({ ...message('service:resize', 'consent'), ts: '2025-03-01T13:00:00+01:00' }, '/ts');
    expectInvalid({ ...message('service:resize', 'consent'), ts: 'yesterday' }, '/ts');
  });

  it('checks outcomes per kind and payload values', () => {
    expectInvalid(message('service:complete', 'consent', { ...samples.consent['service:complete'], outcome: 'approved' }), '/payload/outcome');
    expectInvalid(message('service:complete', 'approval', { ...samples.approval['service:complete'], outcome: 'granted' }), '/payload/outcome');
    expectInvalid(message('service:state', 'consent', { ...samples.consent['service:state'], to: 'done' }), '/payload/to');
    expectInvalid(message('service:resize', 'consent', { height: 10.5 }), '/payload/height');
    expectInvalid(message('service:resize', 'consent', { height: -1 }), '/payload/height');
    expectInvalid(message('service:cancel', 'consent', { reason: 'x', cancelled_by: 'agent' }), '/payload/cancelled_by');
    expectInvalid(message('service:ready', 'consent', { ...samples.consent['service:ready'], mode: 'iframe' }), '/payload/mode');
    expectInvalid(message('service:state', 'approval', samples.consent['service:state']), 'kind_payload');
  });

  it('rejects non-objects', () => {
    for (const candidate of [null, undefined, 'service:ready', 42, []]) expectInvalid(candidate);
  });

  it('validates a payload alone', () => {
    expect(validateFramePayload('service:resize', 'approval', { height: 3 })).toEqual({ valid: true });
    expect(validateFramePayload('service:resize', 'approval', { height: '3' }).valid).toBe(false);
  });
});

describe('stepPosition', () => {
  it('places statuses on their path', () => {
    expect(stepPosition('standard', 'pending', 'authenticating')).toEqual({ step_index: 1, total_steps: 5 });
    expect(stepPosition('standard', 'reviewing', 'fulfilled')).toEqual({ step_index: 4, total_steps: 5 });
    expect(stepPosition('informed', 'informed', 'evidenced')).toEqual({ step_index: 2, total_steps: 4 });
    expect(stepPosition('standard', 'verifying', 'expired')).toEqual({ step_index: 2, total_steps: 5 });
    expect(stepPosition('informed', 'fulfilled', 'revoked')).toEqual({ step_index: 3, total_steps: 4 });
  });
});
