import fc from 'fast-check';
import { createEnvelope, DecisionKind, FrameMessageType, loadSchema, MESSAGE_TYPES, SCHEMA_NAMES, validateFrameMessage } from '@dcr/frame-protocol';
import { acceptFrameMessage, FRAME_SCHEMAS, frameMessageErrors, hostCancelMessage, isDateTime, SUPPORTED_KEYWORDS } from './service-protocol';

const ANNOTATIONS = ['$schema', '$id', 'title', 'description', '$comment'];

function withoutAnnotations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAnnotations);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).filter(([key]) => !ANNOTATIONS.includes(key)).map(([key, child]) => [key, withoutAnnotations(child)]));
  }
  return value;
}

function keywords(schema: Record<string, any>, found = new Set<string>()): Set<string> {
  for (const [key, value] of Object.entries(schema)) {
    found.add(key);
    if (key === 'properties') for (const child of Object.values(value)) keywords(child as Record<string, any>, found);
    else if (key === 'anyOf') for (const child of value as object[]) keywords(child as Record<string, any>, found);
    else if (['if', 'then', 'else'].includes(key) || (key === 'additionalProperties' && typeof value === 'object')) keywords(value, found);
  }
  return found;
}

const NOW = '2025-03-01T12:00:00.000Z';
const samples: Record<DecisionKind, Record<FrameMessageType, Record<string, unknown>>> = {
  consent: {
    'service:ready': { kind: 'consent', session_token: 'dts_abc', deadline_at: NOW, branding: {}, mode: 'embed', locale: 'de-DE' },
    'service:state': { from: 'pending', to: 'authenticating', step_index: 1, total_steps: 5 },
    'service:complete': { outcome: 'granted', exchange_token: 'ct_123', completed_at: NOW },
    'service:cancel': { reason: 'user_cancelled', cancelled_by: 'user' },
    'service:error': { code: 'invalid_code', message: 'The code is wrong.', fatal: false, recoverable_via: 'sign_in' },
    'service:resize': { height: 640 },
    'service:deadline': { remaining_seconds: 30, level: 'warning', deadline_at: NOW },
  },
  approval: {
    'service:ready': { kind: 'approval', session_token: 'dts_xyz', deadline_at: null, branding: { color: '#000' }, mode: 'popup', locale: 'en' },
    'service:state': { from: 'verifying', to: 'reviewing', kind_payload: { step_index: 3, total_steps: 5 } },
    'service:complete': { outcome: 'countered', exchange_token: 'ct_456', completed_at: NOW },
    'service:cancel': { reason: 'host_closed', cancelled_by: 'host' },
    'service:error': { code: 'gone', message: 'Gone.', fatal: true, recoverable_via: null },
    'service:resize': { height: 0 },
    'service:deadline': { remaining_seconds: 0, level: 'expired', deadline_at: NOW },
  },
};

const message = (type: FrameMessageType, kind: DecisionKind) =>
  createEnvelope(type, kind, samples[kind][type] as never, { now: NOW }) as unknown as Record<string, any>;

/** Values that sit on the schemas' edges: other types, near-valid timestamps and ids, numbers at bounds. */
const edgeValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    null, true, 0, -1, 1.5, 2, 30, 5, 15, 1, '', 'x', 'service:ready', 'service:*', 'consent', 'approval', 'embed', 'granted', 'approved',
    'host', 'user', 'warning', 'expired', 'pending', 'fulfilled', [], {}, { step_index: 1 },
    '2025-02-29T10:00:00Z', '2024-02-29T10:00:00Z', '2025-13-01T00:00:00Z', '2025-04-31T00:00:00Z', '2025-03-01T24:00:00Z',
    '2025-03-01T23:59:60Z', '2025-03-01T12:00:00.123456789Z', '2025-03-01T12:00:00.1234567890Z', '2025-03-01t12:00:00z',
    '2025-03-01T12:00:00+01:00', '2025-03-01 12:00:00Z',
    'c3f9a2de-5b1e-4c3a-9f1e-0c2b4d6e8f10', 'c3f9a2de-5b1e-1c3a-9f1e-0c2b4d6e8f10', 'C3F9A2DE-5B1E-4C3A-AF1E-0C2B4D6E8F10',
    'de-DE', 'en', 'english', 'a'.repeat(501), 'ü'.repeat(500),
  ),
);

/** A valid message with a few mutations: a field replaced, removed or added, in the envelope or the payload. */
const mutatedMessage = fc
  .tuple(
    fc.constantFrom(...MESSAGE_TYPES),
    fc.constantFrom<DecisionKind>('consent', 'approval'),
    fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'add'), fc.boolean(), fc.nat(), edgeValue, fc.string({ maxLength: 12 })), { maxLength: 3 }),
  )
  .map(([type, kind, mutations]) => {
    const candidate = message(type, kind);
    candidate.payload = { ...candidate.payload };
    for (const [operation, inPayload, index, value, name] of mutations) {
      const target = inPayload && typeof candidate.payload === 'object' && candidate.payload !== null ? candidate.payload : candidate;
      const keys = Object.keys(target);
      const key = keys.length > 0 ? keys[index % keys.length] : name;
      if (operation === 'set') target[key] = value;
      else if (operation === 'delete') delete target[key];
      else target[name] = value;
    }
    return candidate;
  });

describe('the shipped schemas', () => {
  it('are the frame protocol schemas, without their annotations', () => {
    expect(Object.keys(FRAME_SCHEMAS).sort()).toEqual([...SCHEMA_NAMES].sort());
    for (const name of SCHEMA_NAMES) expect([name, FRAME_SCHEMAS[name]]).toEqual([name, withoutAnnotations(loadSchema(name))]);
  });

  it('use only keywords the validator implements', () => {
    const used = new Set<string>();
    for (const schema of Object.values(FRAME_SCHEMAS)) keywords(schema as Record<string, any>, used);
    expect([...used].filter((keyword) => !(SUPPORTED_KEYWORDS as readonly string[]).includes(keyword))).toEqual([]);
  });
});

describe('frameMessageErrors', () => {
  it('accepts every message type of both kinds', () => {
    for (const kind of ['consent', 'approval'] as const) for (const type of MESSAGE_TYPES) expect([type, kind, frameMessageErrors(message(type, kind))]).toEqual([type, kind, []]);
  });

  it('names what is wrong', () => {
    expect(frameMessageErrors({ ...message('service:resize', 'consent'), version: 1 })).toEqual(['/version: must be 2']);
    expect(frameMessageErrors({ ...message('service:resize', 'consent'), extra: 1 })).toEqual(["/: unexpected property 'extra'"]);
    expect(frameMessageErrors(message('service:deadline', 'approval'))).toEqual([]);
    const deadline = message('service:deadline', 'consent');
    deadline.payload.level = 'expired';
    expect(frameMessageErrors(deadline)).toEqual(['/payload/level: must be "warning"']);
    expect(frameMessageErrors(null)).toEqual(['/: must be object']);
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])('refuses an unexpected property named %s, as Ajv does (found by the property test below)', (name) => {
    const candidate: Record<string, unknown> = JSON.parse(JSON.stringify(message('service:ready', 'consent')));
    Object.defineProperty(candidate, name, { value: '', enumerable: true, configurable: true, writable: true });
    const payload = { ...(candidate.payload as Record<string, unknown>) };
    Object.defineProperty(payload, name, { value: '', enumerable: true, configurable: true, writable: true });
    expect(frameMessageErrors(candidate)).toEqual([`/: unexpected property '${name}'`]);
    expect(validateFrameMessage(candidate).valid).toBe(false);
    expect(frameMessageErrors({ ...message('service:ready', 'consent'), payload })).toEqual([`/payload: unexpected property '${name}'`]);
  });

  it('agrees with Ajv (Draft 2020-12, ajv-formats) on mutated messages', () => {
    fc.assert(
      fc.property(mutatedMessage, (candidate) => {
        expect({ candidate, valid: frameMessageErrors(candidate).length === 0 }).toEqual({ candidate, valid: validateFrameMessage(candidate).valid });
      }),
      { numRuns: 3000 },
    );
  });

  it('checks date-times as RFC 3339 does', () => {
    for (const valid of ['2024-02-29T00:00:00Z', '2025-03-01T23:59:60Z', '2025-03-02T00:59:60+01:00', '2025-03-01T12:00:00.5+01']) expect([valid, isDateTime(valid)]).toEqual([valid, true]);
    for (const invalid of ['2025-02-29T00:00:00Z', '2025-03-01T12:59:60Z', '2025-03-01T12:00:00', '2025-00-01T00:00:00Z', '2025-03-01T12:00:00+24:00']) {
      expect([invalid, isDateTime(invalid)]).toEqual([invalid, false]);
    }
  });
});

describe('acceptFrameMessage', () => {
  const origin = 'https://flows.example.com';
  const source = {};
  const complete = message('service:complete', 'consent');

  it('takes a valid message from the flow host and the expected window', () => {
    expect(acceptFrameMessage({ origin, source, data: complete }, { origin, source, kind: 'consent' })).toBe(complete);
  });

  it.each([
    ['another origin', { origin: 'https://evil.example', source, data: complete }],
    ['another window', { origin, source: {}, data: complete }],
    ['version 1', { origin, source, data: { ...complete, version: 1 } }],
    ['version "2"', { origin, source, data: { ...complete, version: '2' } }],
    ['a type without the service: prefix', { origin, source, data: { ...complete, type: 'complete' } }],
    ['an envelope that fails its schema', { origin, source, data: { ...complete, message_id: 'not-a-uuid' } }],
    ['a payload that fails its schema', { origin, source, data: { ...complete, payload: { ...complete.payload, claims: {} } } }],
    ['another kind than the session', { origin, source, data: message('service:complete', 'approval') }],
    ['a string', { origin, source, data: JSON.stringify(complete) }],
  ])('ignores %s', (_label, event) => {
    expect(acceptFrameMessage(event, { origin, source, kind: 'consent' })).toBeNull();
  });
});

describe('hostCancelMessage', () => {
  it('is a valid service:cancel from the host', () => {
    const cancel = hostCancelMessage('approval', 'host_closed');
    expect(validateFrameMessage(cancel)).toEqual({ valid: true });
    expect(cancel.payload).toEqual({ reason: 'host_closed', cancelled_by: 'host' });
  });
});
