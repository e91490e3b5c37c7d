import { CAPTURE_TOKEN_FIELD as FORMS_CAPTURE_TOKEN_FIELD } from './service-forms';
import { acceptFieldMessage, CAPTURE_TOKEN_FIELD, FIELD_FRAME_TYPES, FIELD_HOST_TYPES, FIELD_MESSAGE_PREFIX, fieldMessage, fieldMessageErrors, tokenExpiring } from './service-field-protocol';
import { FRAME_SCHEMAS, schemaErrors } from './service-protocol';

const frameWindow = { name: 'frame' };
const otherWindow = { name: 'other' };
const SERVICE = 'https://us.service.example';
const REQUEST_ID = '0b5f5b4e-8a54-4b8e-9f0f-2f6a7c1d9e11';

const samples = {
  'service-field:ready': { flow_id: 'flw_dev_0123456789abcdef', flow_version: 1, locale: 'en', controls: { newsletter: false, fraud: true } },
  'service-field:state': { controls: { newsletter: true, fraud: true } },
  'service-field:captured': { request_id: REQUEST_ID, capture_token: `cap_us${'a'.repeat(30)}`, expires_at: '2025-03-02T08:14:02.000Z' },
  'service-field:failed': {
    request_id: REQUEST_ID,
    code: 'validation_failed',
    message: 'The request did not pass validation',
    status: 422,
    details: [{ field: 'render_proof', reason: 'the field showed version 1 of the flow; version 2 is active now: reload the page' }],
    service_request_id: 'req_0123456789abcdef',
  },
  'service:resize': { height: 212 },
  'service:error': { code: 'field_unavailable', message: 'The field could not be shown', fatal: true, recoverable_via: null },
  'service-field:init': { appearance: { accent: '#1d4ed8' } },
  'service-field:capture': { request_id: REQUEST_ID, commit: { subject: { email: 'ada@example.com' } } },
} as const;

describe('the consent field messages', () => {
  it('use a service: type only where it is one of the seven of protocol version 2, and service-field: for their own', () => {
    for (const type of [...FIELD_FRAME_TYPES, ...FIELD_HOST_TYPES]) {
      const message = fieldMessage(type, samples[type]);
      if (type.startsWith('service:')) expect([type, schemaErrors(FRAME_SCHEMAS.envelope, message)]).toEqual([type, []]);
      else expect(type.startsWith(FIELD_MESSAGE_PREFIX)).toBe(true);
    }
  });

  it('builds version 2 envelopes that pass their schemas, each in its direction only', () => {
    for (const type of FIELD_FRAME_TYPES) {
      const message = fieldMessage(type, samples[type]);
      expect(message).toMatchObject({ type, kind: 'consent', version: 2, payload: samples[type] });
      expect([type, fieldMessageErrors(message, 'frame')]).toEqual([type, []]);
      expect(fieldMessageErrors(message, 'host')).not.toEqual([]);
    }
    for (const type of FIELD_HOST_TYPES) {
      const message = fieldMessage(type, samples[type]);
      expect([type, fieldMessageErrors(message, 'host')]).toEqual([type, []]);
      expect(fieldMessageErrors(message, 'frame')).not.toEqual([]);
    }
  });

  it('lets a capture say the home country of a person committed elsewhere, as a country code only', () => {
    expect(fieldMessageErrors(fieldMessage('service-field:captured', { ...samples['service-field:captured'], home_country: 'DE' }), 'frame')).toEqual([]);
    expect(fieldMessageErrors(fieldMessage('service-field:captured', { ...samples['service-field:captured'], home_country: 'Germany' }), 'frame')).toHaveLength(1);
  });

  it("takes a commit's e-mail address up to the service's 254 characters, no longer (the service refuses 255 and more)", () => {
    const commit = (email: string) => fieldMessage('service-field:capture', { request_id: REQUEST_ID, commit: { subject: { email } } });
    const at254 = `${'a'.repeat(64)}@${'d'.repeat(185)}.com`;
    expect(fieldMessageErrors(commit(at254), 'host')).toEqual([]);
    for (const email of [`${at254}m`, `${'a'.repeat(64)}@${'d'.repeat(251)}.com`]) expect(fieldMessageErrors(commit(email), 'host')).toHaveLength(1);
  });

  it("carries a failed capture's status, details and request id, each detail a field and a reason only; with no answer, a code and message alone", () => {
    const failed = samples['service-field:failed'];
    expect(fieldMessageErrors(fieldMessage('service-field:failed', { request_id: REQUEST_ID, code: 'connection_error', message: 'Could not reach the service' }), 'frame')).toEqual([]);
    expect(fieldMessageErrors(fieldMessage('service-field:failed', { ...failed, details: [{ field: 'render_proof' }] }), 'frame')).toEqual(["/payload/details/0: missing property 'reason'"]);
    expect(fieldMessageErrors(fieldMessage('service-field:failed', { ...failed, details: [{ field: 'a', reason: 'b', value: 'secret' }] }), 'frame')).toEqual([
      "/payload/details/0: unexpected property 'value'",
    ]);
    expect(fieldMessageErrors(fieldMessage('service-field:failed', { ...failed, status: '422' }), 'frame')).toEqual(['/payload/status: must be integer']);
  });

  it('names what breaks a payload', () => {
    expect(fieldMessageErrors(fieldMessage('service-field:state', { controls: { newsletter: 'yes' } }), 'frame')).toEqual(['/payload/controls/newsletter: must be boolean']);
    expect(fieldMessageErrors(fieldMessage('service-field:captured', { ...samples['service-field:captured'], render_proof: 'x' }), 'frame')).toEqual([
      "/payload: unexpected property 'render_proof'",
    ]);
    expect(fieldMessageErrors({ ...fieldMessage('service:resize', { height: 1 }), kind: 'approval' }, 'frame')).toEqual(['/kind: must be "consent"']);
  });

  it('accepts a message only from the expected origin and window, with version 2 and the service: prefix', () => {
    const message = fieldMessage('service-field:state', samples['service-field:state']);
    const expected = { origin: SERVICE, source: frameWindow, direction: 'frame' as const };
    expect(acceptFieldMessage({ origin: SERVICE, source: frameWindow, data: message }, expected)).toBe(message);
    expect(acceptFieldMessage({ origin: 'https://evil.example', source: frameWindow, data: message }, expected)).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: otherWindow, data: message }, expected)).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: null, data: message }, { ...expected, source: null })).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: frameWindow, data: { ...message, version: 1 } }, expected)).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: frameWindow, data: { ...message, type: 'field-state' } }, expected)).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: frameWindow, data: { ...message, message_id: 'not-a-uuid' } }, expected)).toBeNull();
    expect(acceptFieldMessage({ origin: SERVICE, source: frameWindow, data: 'service-field:state' }, expected)).toBeNull();
  });
});

describe('the consent field and forms.attach', () => {
  it('write the capture token into the same hidden input', () => {
    expect(CAPTURE_TOKEN_FIELD).toBe(FORMS_CAPTURE_TOKEN_FIELD);
  });
});

describe('tokenExpiring', () => {
  it('keeps a token reusable until a minute before it expires, and never an unreadable date', () => {
    const now = Date.parse('2026-11-22T10:00:00.000Z');
    expect(tokenExpiring('2026-11-23T10:00:00.000Z', now)).toBe(false);
    expect(tokenExpiring('2026-11-22T10:01:00.000Z', now)).toBe(false);
    expect(tokenExpiring('2026-11-22T10:00:59.999Z', now)).toBe(true);
    expect(tokenExpiring('2026-11-21T10:00:00.000Z', now)).toBe(true);
    expect(tokenExpiring('', now)).toBe(true);
  });
});
