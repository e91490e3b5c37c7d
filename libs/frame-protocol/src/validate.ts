import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadSchema, payloadSchemaName, SCHEMA_NAMES, SchemaName } from './schemas';
import { DecisionKind, FrameMessageType } from './types';

export type FrameValidationResult = { valid: true } | { valid: false; errors: string[] };

let ajv: Ajv2020 | undefined;
const validators = new Map<SchemaName, ValidateFunction>();

function validator(name: SchemaName): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(ajv);
    for (const schemaName of SCHEMA_NAMES) ajv.addSchema(loadSchema(schemaName));
  }
  let validate = validators.get(name);
  if (!validate) {
    const id = loadSchema(name)['$id'] as string;
    validate = ajv.getSchema(id);
    if (!validate) throw new Error(`Frame protocol schema ${name} did not compile`);
    validators.set(name, validate);
  }
  return validate;
}

function describe(errors: ErrorObject[] | null | undefined, prefix: string): string[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => {
      const where = `${prefix}${e.instancePath}` || '/';
      if (e.keyword === 'additionalProperties') return `${where}: unexpected property '${String(e.params['additionalProperty'])}'`;
      if (e.keyword === 'enum') return `${where}: must be one of ${JSON.stringify(e.params['allowedValues'])}`;
      if (e.keyword === 'const') return `${where}: must be ${JSON.stringify(e.params['allowedValue'])}`;
      return `${where}: ${e.message ?? e.keyword}`;
    });
}

/** Compiles every shipped schema (throws when one does not compile). */
export function compileFrameSchemas(): void {
  for (const name of SCHEMA_NAMES) validator(name);
}

/**
 * Validates a frame message: first the envelope, then its payload against the schema chosen by
 * (type, kind). Error strings name the JSON pointer of the offending value.
 */
export function validateFrameMessage(message: unknown): FrameValidationResult {
  const envelope = validator('envelope');
  if (!envelope(message)) return { valid: false, errors: describe(envelope.errors, '') };
  const { type, kind, payload } = message as { type: FrameMessageType; kind: DecisionKind; payload: unknown };
  const validatePayload = validator(payloadSchemaName(type, kind));
  if (!validatePayload(payload)) return { valid: false, errors: describe(validatePayload.errors, '/payload') };
  return { valid: true };
}

/** Validates a payload alone against the schema for (type, kind). */
export function validateFramePayload(type: FrameMessageType, kind: DecisionKind, payload: unknown): FrameValidationResult {
  const validate = validator(payloadSchemaName(type, kind));
  if (!validate(payload)) return { valid: false, errors: describe(validate.errors, '') };
  return { valid: true };
}
