/*
 * The messages between the consent field's frame and the `service-consent-field` element. They keep
 * the rules of postMessage protocol version 2: the six-field envelope (`type`, `kind: "consent"`,
 * `version: 2`, `payload`, `ts`, `message_id`), a named target origin on the way out and an origin,
 * window and schema check on the way in. `service:resize` and `service:error` are the decision
 * frame's messages with their own schemas; the field's own types have their own prefix,
 * `service-field:` (protocol version 2 closes its `service:` types at the decision frame's seven):
 *
 *   frame → host  service-field:ready     {flow_id, flow_version, locale, controls: {key: ticked}}
 *                 service-field:state     {controls: {key: ticked}}            (each change)
 *                 service-field:captured  {request_id, capture_token, expires_at, record_id?, channel?, home_country?}
 *                 service-field:failed    {request_id, code, message, status?, details?, service_request_id?}
 *                 service:resize          {height}
 *                 service:error           {code, message, fatal, recoverable_via}
 *   host → frame  service-field:init      {appearance}                         (after field-ready)
 *                 service-field:capture   {request_id, commit?: {subject: {email, external_id?}}}
 *
 * So the host page learns the state of the controls and the capture token, nothing else; the render
 * proof never leaves the frame.
 */
import { DecisionKind, FRAME_SCHEMAS, JsonSchema, MESSAGE_PREFIX, PROTOCOL_VERSION, schemaErrors, uuidV4 } from './service-protocol.js';

/**
 * The hidden input the element writes the capture token into, besides its `name`: the one forms.attach
 * writes (service-forms.ts; a test keeps them equal, without loading the snippet into the field).
 */
export const CAPTURE_TOKEN_FIELD = 'service_capture_token';

/**
 * The prefix of the field's own types. Not `service:`: protocol version 2 closes its `service:`
 * types at the seven of the decision frame, so the field's messages are kept apart from them, and a
 * host page that listens for decision-frame messages ignores them by their prefix.
 */
export const FIELD_MESSAGE_PREFIX = 'service-field:';

export const FIELD_FRAME_TYPES = ['service-field:ready', 'service-field:state', 'service-field:captured', 'service-field:failed', 'service:resize', 'service:error'] as const;
export const FIELD_HOST_TYPES = ['service-field:init', 'service-field:capture'] as const;
export type FieldFrameMessageType = (typeof FIELD_FRAME_TYPES)[number];
export type FieldHostMessageType = (typeof FIELD_HOST_TYPES)[number];
export type FieldMessageType = FieldFrameMessageType | FieldHostMessageType;

export interface FieldMessage<T extends FieldMessageType = FieldMessageType> {
  type: T;
  kind: DecisionKind;
  version: 2;
  payload: Record<string, any>;
  ts: string;
  message_id: string;
}

const envelope = FRAME_SCHEMAS.envelope;
const UUID = envelope.properties!.message_id;
const DATE_TIME = envelope.properties!.ts;
const CONTROLS: JsonSchema = { type: 'object', additionalProperties: { type: 'boolean' } };

/** Payload schemas of the field's messages (the subset of JSON Schema the core validates). */
export const FIELD_SCHEMAS: Readonly<Record<FieldMessageType, JsonSchema>> = {
  'service-field:ready': {
    type: 'object',
    required: ['flow_id', 'flow_version', 'locale', 'controls'],
    properties: {
      flow_id: { type: 'string', pattern: '^flw_[a-z]{2,8}_[0-9a-z]{16}$' },
      flow_version: { type: 'integer', minimum: 1 },
      locale: { type: 'string', pattern: '^[a-z]{2,3}$' },
      controls: CONTROLS,
    },
    additionalProperties: false,
  },
  'service-field:state': { type: 'object', required: ['controls'], properties: { controls: CONTROLS }, additionalProperties: false },
  'service-field:captured': {
    type: 'object',
    required: ['request_id', 'capture_token', 'expires_at'],
    properties: {
      request_id: UUID,
      capture_token: { type: 'string', pattern: '^cap_[a-z]{2}[0-9a-z]{30}$' },
      expires_at: DATE_TIME,
      record_id: { type: 'string', minLength: 1, maxLength: 128 },
      channel: { enum: ['embedded_field', 'embedded_field_browser'] },
      // A browser commit for a person homed in another country: captured, not committed; the
      // organisation's server commits it there (authorize at that country's endpoint).
      home_country: { type: 'string', pattern: '^[A-Z]{2}$' },
    },
    additionalProperties: false,
  },
  // A capture the service refused, or that got no answer: what the service said, so the element
  // rejects with the typed error an HTTP client would (service:error's payload is fixed by the
  // protocol and carries neither the status nor the details naming the field).
  'service-field:failed': {
    type: 'object',
    required: ['request_id', 'code', 'message'],
    properties: {
      request_id: UUID,
      code: { type: 'string', minLength: 1, maxLength: 100 },
      message: { type: 'string', maxLength: 2000 },
      status: { type: 'integer', minimum: 100 },
      details: {
        type: 'array',
        items: { type: 'object', required: ['field', 'reason'], properties: { field: { type: 'string', maxLength: 1000 }, reason: { type: 'string', maxLength: 1000 } }, additionalProperties: false },
      },
      service_request_id: { type: 'string', minLength: 1, maxLength: 128 },
    },
    additionalProperties: false,
  },
  'service:resize': FRAME_SCHEMAS.resize,
  'service:error': FRAME_SCHEMAS['consent/error'],
  'service-field:init': { type: 'object', required: ['appearance'], properties: { appearance: { type: 'object' } }, additionalProperties: false },
  'service-field:capture': {
    type: 'object',
    required: ['request_id'],
    properties: {
      request_id: UUID,
      commit: {
        type: 'object',
        required: ['subject'],
        properties: {
          subject: {
            type: 'object',
            required: ['email'],
            properties: { email: { type: 'string', minLength: 3, maxLength: 254 }, external_id: { type: 'string', minLength: 1, maxLength: 200 } },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
};

function envelopeFor(types: readonly string[]): JsonSchema {
  return { ...envelope, properties: { ...envelope.properties, type: { enum: [...types] }, kind: { const: 'consent' } } };
}
const FRAME_ENVELOPE = envelopeFor(FIELD_FRAME_TYPES);
const HOST_ENVELOPE = envelopeFor(FIELD_HOST_TYPES);

/** A field message, stamped now with a fresh UUID v4. */
export function fieldMessage<T extends FieldMessageType>(type: T, payload: Record<string, unknown>): FieldMessage<T> {
  return { type, kind: 'consent', version: PROTOCOL_VERSION, payload, ts: new Date().toISOString(), message_id: uuidV4() };
}

/** The problems of a field message sent in `direction` (envelope first, then the payload). */
export function fieldMessageErrors(message: unknown, direction: 'frame' | 'host'): string[] {
  const problems = schemaErrors(direction === 'frame' ? FRAME_ENVELOPE : HOST_ENVELOPE, message);
  if (problems.length > 0) return problems;
  const { type, payload } = message as FieldMessage;
  return schemaErrors(FIELD_SCHEMAS[type], payload, '/payload');
}

/**
 * A received `message` event as a valid field message from `direction`'s side, or null when it must
 * be ignored: another origin or window, a version other than 2, neither the `service:` prefix (resize,
 * error) nor `service-field:` (the field's own types), or a message
 * that fails its schema.
 */
export function acceptFieldMessage(
  event: { origin: string; data: unknown; source?: unknown },
  expected: { origin: string; source: unknown; direction: 'frame' | 'host' },
): FieldMessage | null {
  if (event.origin !== expected.origin || event.source !== expected.source || expected.source === null || expected.source === undefined) return null;
  const data = event.data as Record<string, unknown> | null;
  if (typeof data !== 'object' || data === null || data.version !== PROTOCOL_VERSION) return null;
  if (typeof data.type !== 'string' || !(data.type.startsWith(MESSAGE_PREFIX) || data.type.startsWith(FIELD_MESSAGE_PREFIX))) return null;
  return fieldMessageErrors(data, expected.direction).length === 0 ? (data as unknown as FieldMessage) : null;
}

/**
 * A capture token about to expire uncommitted (or already expired: a page left open a day) is not
 * reused: the organisation's server could no longer commit it. A minute's margin for that commit.
 */
export function tokenExpiring(expiresAt: string, now = Date.now()): boolean {
  const at = Date.parse(expiresAt);
  return !Number.isFinite(at) || at - now < 60_000;
}
