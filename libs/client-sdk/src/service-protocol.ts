/*
 * postMessage protocol version 2, as a host page checks it. The frame's JSON Schemas (Draft 2020-12)
 * ship inside this module, with a validator for exactly the keywords they use: no runtime dependency.
 */

export const PROTOCOL_VERSION = 2;
export const MESSAGE_PREFIX = 'service:';

export type DecisionKind = 'consent' | 'approval';
export type FrameMessageType =
  | 'service:ready'
  | 'service:state'
  | 'service:complete'
  | 'service:cancel'
  | 'service:error'
  | 'service:resize'
  | 'service:deadline';

/** A message that passed every check: the six-field envelope and its payload. */
export interface FrameMessage {
  type: FrameMessageType;
  kind: DecisionKind;
  version: 2;
  payload: Record<string, any>;
  ts: string;
  message_id: string;
}

/** The subset of JSON Schema the frame schemas use. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  pattern?: string;
  format?: 'date-time';
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
}

/** The keywords the validator implements; a schema with any other keyword is refused (see the tests). */
export const SUPPORTED_KEYWORDS = [
  'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'pattern', 'format',
  'minLength', 'maxLength', 'minimum', 'items', 'anyOf', 'if', 'then', 'else',
] as const;

/**
 * The frame protocol's schemas (libs/frame-protocol/schemas, also served at /schemas/frame/v2/),
 * without their annotations (`$schema`, `$id`, `title`, `description`), which do not validate anything.
 * A unit test keeps this copy equal to the published files.
 */
export const FRAME_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  "envelope": {"type":"object","required":["type","kind","version","payload","ts","message_id"],"properties":{"type":{"enum":["service:ready","service:state","service:complete","service:cancel","service:error","service:resize","service:deadline"]},"kind":{"enum":["consent","approval"]},"version":{"const":2},"payload":{"type":"object"},"ts":{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"},"message_id":{"type":"string","pattern":"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"}},"additionalProperties":false},
  "ready": {"type":"object","required":["kind","session_token","deadline_at","branding","mode","locale"],"properties":{"kind":{"enum":["consent","approval"]},"session_token":{"type":"string","minLength":1},"deadline_at":{"anyOf":[{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"},{"type":"null"}]},"branding":{"type":"object"},"mode":{"enum":["embed","popup","redirect","direct"]},"locale":{"type":"string","pattern":"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"}},"additionalProperties":false},
  "resize": {"type":"object","required":["height"],"properties":{"height":{"type":"integer","minimum":0}},"additionalProperties":false},
  "cancel": {"type":"object","required":["reason","cancelled_by"],"properties":{"reason":{"type":"string","minLength":1,"maxLength":500},"cancelled_by":{"enum":["user","host"]}},"additionalProperties":false},
  "consent/state": {"type":"object","required":["from","to","step_index","total_steps"],"properties":{"from":{"enum":["pending","authenticating","verifying","reviewing","informed","evidenced","fulfilled","expired","revoked"]},"to":{"enum":["pending","authenticating","verifying","reviewing","informed","evidenced","fulfilled","expired","revoked"]},"step_index":{"type":"integer","minimum":0},"total_steps":{"type":"integer","minimum":1}},"additionalProperties":false},
  "consent/complete": {"type":"object","required":["outcome","exchange_token","completed_at"],"properties":{"outcome":{"enum":["granted","declined"]},"exchange_token":{"type":"string","minLength":1},"completed_at":{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"}},"additionalProperties":false},
  "consent/error": {"type":"object","required":["code","message","fatal","recoverable_via"],"properties":{"code":{"type":"string","minLength":1},"message":{"type":"string"},"fatal":{"type":"boolean"},"recoverable_via":{"anyOf":[{"type":"string","minLength":1},{"type":"null"}]}},"additionalProperties":false},
  "consent/deadline": {"type":"object","required":["remaining_seconds","level","deadline_at"],"properties":{"remaining_seconds":{"enum":[30,15,5,0]},"level":{"enum":["warning","expired"]},"deadline_at":{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"}},"additionalProperties":false,"if":{"properties":{"remaining_seconds":{"const":0}},"required":["remaining_seconds"]},"then":{"properties":{"level":{"const":"expired"}}},"else":{"properties":{"level":{"const":"warning"}}}},
  "approval/state": {"type":"object","required":["from","to","kind_payload"],"properties":{"from":{"enum":["pending","authenticating","verifying","reviewing","informed","evidenced","fulfilled","expired","revoked"]},"to":{"enum":["pending","authenticating","verifying","reviewing","informed","evidenced","fulfilled","expired","revoked"]},"kind_payload":{"type":"object"}},"additionalProperties":false},
  "approval/complete": {"type":"object","required":["outcome","exchange_token","completed_at"],"properties":{"outcome":{"enum":["approved","denied","countered"]},"exchange_token":{"type":"string","minLength":1},"completed_at":{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"}},"additionalProperties":false},
  "approval/error": {"type":"object","required":["code","message","fatal","recoverable_via"],"properties":{"code":{"type":"string","minLength":1},"message":{"type":"string"},"fatal":{"type":"boolean"},"recoverable_via":{"anyOf":[{"type":"string","minLength":1},{"type":"null"}]}},"additionalProperties":false},
  "approval/deadline": {"type":"object","required":["remaining_seconds","level","deadline_at"],"properties":{"remaining_seconds":{"enum":[30,15,5,0]},"level":{"enum":["warning","expired"]},"deadline_at":{"type":"string","format":"date-time","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$"}},"additionalProperties":false,"if":{"properties":{"remaining_seconds":{"const":0}},"required":["remaining_seconds"]},"then":{"properties":{"level":{"const":"expired"}}},"else":{"properties":{"level":{"const":"warning"}}}},
};

const patterns = new Map<string, RegExp>();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return keysA.length === keysB.length && keysA.every((key) => equal((a as any)[key], (b as any)[key]));
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return false;
  }
}

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt\s](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|([+-])(\d\d)(?::?(\d\d))?)$/;

/** RFC 3339 date-time, as ajv-formats checks it (real dates, a leap second only at 23:59:60 UTC). */
export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS[month])) return false;
  const sign = m[9] === '-' ? -1 : 1;
  const zoneHours = Number(m[10] ?? 0);
  const zoneMinutes = Number(m[11] ?? 0);
  if (zoneHours > 23 || zoneMinutes > 59) return false;
  if (hour <= 23 && minute <= 59 && second < 60) return true;
  const utcMinute = minute - zoneMinutes * sign;
  const utcHour = hour - zoneHours * sign - (utcMinute < 0 ? 1 : 0);
  return (utcHour === 23 || utcHour === -1) && (utcMinute === 59 || utcMinute === -1) && second < 61;
}

/** The problems of `value` against `schema` (JSON pointers), none when it is valid. */
export function schemaErrors(schema: JsonSchema, value: unknown, path = ''): string[] {
  const errors: string[] = [];
  const at = path || '/';
  if (schema.type !== undefined && !hasType(schema.type, value)) return [`${at}: must be ${schema.type}`];
  if (schema.const !== undefined && !equal(schema.const, value)) errors.push(`${at}: must be ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.some((option) => equal(option, value))) errors.push(`${at}: must be one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) errors.push(`${at}: must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) errors.push(`${at}: must have at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined) {
      let pattern = patterns.get(schema.pattern);
      if (!pattern) patterns.set(schema.pattern, (pattern = new RegExp(schema.pattern, 'u')));
      if (!pattern.test(value)) errors.push(`${at}: must match ${schema.pattern}`);
    }
    if (schema.format === 'date-time' && !isDateTime(value)) errors.push(`${at}: must be an RFC 3339 date-time`);
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) errors.push(`${at}: must be >= ${schema.minimum}`);
  if (isObject(value)) {
    for (const key of schema.required ?? []) if (!Object.prototype.hasOwnProperty.call(value, key)) errors.push(`${at}: missing property '${key}'`);
    for (const [key, child] of Object.entries(value)) {
      // Own properties only: a message's `toString` or `constructor` key is not a declared property.
      const property = schema.properties && Object.prototype.hasOwnProperty.call(schema.properties, key) ? schema.properties[key] : undefined;
      if (property) errors.push(...schemaErrors(property, child, `${path}/${key}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: unexpected property '${key}'`);
      else if (isObject(schema.additionalProperties)) errors.push(...schemaErrors(schema.additionalProperties, child, `${path}/${key}`));
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, index) => errors.push(...schemaErrors(schema.items!, item, `${path}/${index}`)));
  if (schema.anyOf && !schema.anyOf.some((option) => schemaErrors(option, value, path).length === 0)) errors.push(`${at}: must match a schema in anyOf`);
  if (schema.if) {
    const branch = schemaErrors(schema.if, value, path).length === 0 ? schema.then : schema.else;
    if (branch) errors.push(...schemaErrors(branch, value, path));
  }
  return errors;
}

/** The payload schema of a message type for a kind. */
export function payloadSchemaName(type: FrameMessageType, kind: DecisionKind): string {
  const name = type.slice(MESSAGE_PREFIX.length);
  return name === 'ready' || name === 'resize' || name === 'cancel' ? name : `${kind}/${name}`;
}

/** The problems of a message: first the envelope, then its payload. None when it is valid. */
export function frameMessageErrors(message: unknown): string[] {
  const envelope = schemaErrors(FRAME_SCHEMAS.envelope, message);
  if (envelope.length > 0) return envelope;
  const { type, kind, payload } = message as FrameMessage;
  return schemaErrors(FRAME_SCHEMAS[payloadSchemaName(type, kind)], payload, '/payload');
}

/** What a host expects of the messages it takes. */
export interface ExpectedSender {
  /** The flow host's origin (`scheme://host[:port]`). */
  origin: string;
  /** The frame's or the popup's window, when known. */
  source?: unknown;
  /** The session's kind, when known. */
  kind?: DecisionKind;
}

/**
 * A received `message` event as a valid protocol message, or null when it must be ignored: another
 * origin or window, a version other than 2, a type without the `service:` prefix, an envelope or payload
 * that fails its schema, or another kind than the session's.
 */
export function acceptFrameMessage(event: { origin: string; data: unknown; source?: unknown }, expected: ExpectedSender): FrameMessage | null {
  if (event.origin !== expected.origin) return null;
  if (expected.source !== undefined && event.source !== expected.source) return null;
  const data = event.data;
  if (!isObject(data) || data.version !== PROTOCOL_VERSION) return null;
  if (typeof data.type !== 'string' || !data.type.startsWith(MESSAGE_PREFIX)) return null;
  if (frameMessageErrors(data).length > 0) return null;
  if (expected.kind !== undefined && data.kind !== expected.kind) return null;
  return data as unknown as FrameMessage;
}

/** A UUID v4 (crypto.randomUUID is missing outside secure contexts; getRandomValues is not). */
export function uuidV4(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The host's `service:cancel` (cancelled_by `host`), which the frame acknowledges with its own. */
export function hostCancelMessage(kind: DecisionKind, reason: string): FrameMessage {
  return {
    type: 'service:cancel',
    kind,
    version: PROTOCOL_VERSION,
    payload: { reason: reason.slice(0, 500) || 'host_cancelled', cancelled_by: 'host' },
    ts: new Date().toISOString(),
    message_id: uuidV4(),
  };
}
