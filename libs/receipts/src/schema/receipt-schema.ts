import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The receipt schema's version string (spec: "Receipt schema (version string `service-cr/2.13`)"). */
export const RECEIPT_SCHEMA_VERSION = 'service-cr/2.13';

/** What every receipt conforms to (`record.conforms_to`). */
export const RECEIPT_CONFORMS_TO = 'ISO/IEC TS 27560:2023';

/** Where every country serves the schema, byte for byte, below its `{schema_url}`. */
export const RECEIPT_SCHEMA_PATH = '/schemas/receipt/v2/record.json';

/** The schema's `$id`: an identifier, not a fetch location (like the frame protocol's schemas). */
export const RECEIPT_SCHEMA_ID = 'https://schemas.decision-service.dev/receipt/v2/record.json';

/**
 * The `$schema` value a receipt carries: `{schema_url}/schemas/receipt/v2/record.json`. A trailing
 * slash on the base is dropped, so `http://127.0.0.1:3000/` and `http://127.0.0.1:3000` agree.
 */
export function receiptSchemaUrl(schemaUrlBase: string): string {
  return `${schemaUrlBase.replace(/\/+$/, '')}${RECEIPT_SCHEMA_PATH}`;
}

/**
 * Absolute path of `schemas/receipt/v2/record.json`. This file sits two folders below the library
 * root both as `src/schema/*.ts` and as `dist/schema/*.js`, so the same path works from either.
 */
export function receiptSchemaFile(): string {
  return resolve(__dirname, '..', '..', 'schemas', 'receipt', 'v2', 'record.json');
}

let bytes: Buffer | undefined;

/** The schema file's bytes, to be served byte for byte (read once; a copy each call). */
export function receiptSchemaBytes(): Buffer {
  bytes ??= readFileSync(receiptSchemaFile());
  return Buffer.from(bytes);
}

/** The parsed schema (a fresh object each call). */
export function receiptSchema(): Record<string, unknown> {
  return JSON.parse(receiptSchemaBytes().toString('utf8')) as Record<string, unknown>;
}
