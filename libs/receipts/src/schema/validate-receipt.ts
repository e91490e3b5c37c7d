import { DomainError } from '@dcr/domain';
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RECEIPT_SCHEMA_VERSION, receiptSchema } from './receipt-schema';
import type { Receipt } from './receipt-types';

export interface ReceiptSchemaError {
  /** JSON pointer of the offending value (`/record/pii_principal_id`); `/` for the receipt itself. */
  path: string;
  message: string;
}

export interface ReceiptValidationResult {
  valid: boolean;
  errors: ReceiptSchemaError[];
}

let compiled: ValidateFunction | undefined;

/**
 * The compiled schema (compiled once). Strict mode, except `strictRequired`: the conditional rules
 * require properties that their `then`/`else` branch does not redeclare.
 */
function receiptValidator(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, verbose: true });
    addFormats(ajv);
    compiled = ajv.compile(receiptSchema());
  }
  return compiled;
}

/**
 * Compiles the schema now rather than at the first receipt: compiling takes a quarter of a second
 * or more here, during which the process answers nothing, so a service that validates receipts
 * does it while it starts (ReceiptFreezer). Later calls cost nothing.
 */
export function prepareReceiptValidation(): void {
  receiptValidator();
}

/** `must contain exactly one item with party_role "controller"`, from the `contains` subschema. */
function containsMessage(error: ErrorObject): string {
  const min = Number(error.params['minContains'] ?? 1);
  const max = error.params['maxContains'] as number | undefined;
  const items = (n: number) => (n === 1 ? 'one item' : `${n} items`);
  const count = max === undefined ? `at least ${items(min)}` : min === max ? `exactly ${items(min)}` : `${min} to ${max} items`;
  const contains = (error.parentSchema as { contains?: { properties?: Record<string, { const?: unknown }> } } | undefined)?.contains;
  const [field, rule] = Object.entries(contains?.properties ?? {})[0] ?? [];
  return field && rule && 'const' in rule ? `must contain ${count} with ${field} ${JSON.stringify(rule.const)}` : (error.message ?? 'contains');
}

function describe(error: ErrorObject): ReceiptSchemaError {
  const at = error.instancePath;
  switch (error.keyword) {
    case 'required':
      return { path: `${at}/${String(error.params['missingProperty'])}`, message: 'is required' };
    case 'dependentRequired':
      return {
        path: `${at}/${String(error.params['missingProperty'])}`,
        message: `is required with ${String(error.params['property'])}`,
      };
    case 'additionalProperties':
      return { path: `${at}/${String(error.params['additionalProperty'])}`, message: 'is not a field of the receipt schema' };
    case 'false schema':
      return { path: at || '/', message: 'is not allowed here' };
    case 'not':
      return { path: at || '/', message: 'has a value not allowed here' };
    case 'contains':
      return { path: at || '/', message: containsMessage(error) };
    case 'enum':
      return { path: at || '/', message: `must be one of ${JSON.stringify(error.params['allowedValues'])}` };
    case 'const':
      return { path: at || '/', message: `must be ${JSON.stringify(error.params['allowedValue'])}` };
    default:
      return { path: at || '/', message: error.message ?? error.keyword };
  }
}

/** Validates a receipt against `schemas/receipt/v2/record.json`, listing every problem. */
export function validateReceipt(receipt: unknown): ReceiptValidationResult {
  const validate = receiptValidator();
  if (validate(receipt)) return { valid: true, errors: [] };
  const seen = new Set<string>();
  const errors: ReceiptSchemaError[] = [];
  for (const error of validate.errors ?? []) {
    // `if` only reports that a conditional branch failed; the branch's own errors say why. The items
    // that did not match a `contains` subschema are not errors themselves.
    if (error.keyword === 'if' || error.schemaPath.includes('/contains/')) continue;
    const described = describe(error);
    const key = `${described.path}\u0000${described.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(described);
  }
  return { valid: false, errors };
}

/**
 * A receipt the platform built does not follow its own schema: a defect, not a caller error, so it
 * maps to `internal_error`. `details` lists each problem (`field` = JSON pointer).
 */
export class ReceiptSchemaViolation extends DomainError {
  constructor(readonly errors: ReceiptSchemaError[]) {
    super(
      'internal_error',
      `The receipt does not follow ${RECEIPT_SCHEMA_VERSION}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      errors.map((e) => ({ field: e.path, reason: e.message })),
    );
    this.name = 'ReceiptSchemaViolation';
  }
}

/** Throws ReceiptSchemaViolation (listing the errors) unless `receipt` follows the schema. */
export function assertValidReceipt(receipt: unknown): asserts receipt is Receipt {
  const result = validateReceipt(receipt);
  if (!result.valid) throw new ReceiptSchemaViolation(result.errors);
}
