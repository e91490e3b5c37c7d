import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DecisionKind, FrameMessageType } from './types';

/** Every shipped schema, by name (path below `schemas/` without `.json`). */
export const SCHEMA_NAMES = [
  'envelope',
  'ready',
  'resize',
  'cancel',
  'consent/state',
  'consent/complete',
  'consent/error',
  'consent/deadline',
  'approval/state',
  'approval/complete',
  'approval/error',
  'approval/deadline',
] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

/** Absolute path of the `schemas/` folder (the same from `src/` and from `dist/`). */
export function schemasDir(): string {
  return resolve(__dirname, '..', 'schemas');
}

function normalizeName(name: string): SchemaName {
  const bare = name.replace(/^\/+/, '').replace(/\.json$/, '');
  if (!(SCHEMA_NAMES as readonly string[]).includes(bare)) throw new Error(`Unknown frame protocol schema: ${name}`);
  return bare as SchemaName;
}

/**
 * Absolute path of a schema file, e.g. `schemaPath('consent/state')` or `schemaPath('envelope.json')`.
 * Only the shipped names resolve (anything else throws), so a server may pass a request path segment.
 */
export function schemaPath(name: string): string {
  return join(schemasDir(), `${normalizeName(name)}.json`);
}

const cache = new Map<SchemaName, Record<string, unknown>>();

/** The parsed schema (cached; do not mutate). */
export function loadSchema(name: string): Record<string, unknown> {
  const key = normalizeName(name);
  let schema = cache.get(key);
  if (!schema) {
    schema = JSON.parse(readFileSync(schemaPath(key), 'utf8')) as Record<string, unknown>;
    cache.set(key, schema);
  }
  return schema;
}

/** The payload schema that applies to a message type of a kind. */
export function payloadSchemaName(type: FrameMessageType, kind: DecisionKind): SchemaName {
  switch (type) {
    case 'service:ready':
      return 'ready';
    case 'service:resize':
      return 'resize';
    case 'service:cancel':
      return 'cancel';
    case 'service:state':
      return `${kind}/state`;
    case 'service:complete':
      return `${kind}/complete`;
    case 'service:error':
      return `${kind}/error`;
    case 'service:deadline':
      return `${kind}/deadline`;
  }
}
