import { prefixedRandomString } from '../identifiers';

/**
 * `rec_<cc><20>`: a consent record's id, stable across channels and receipt flavors. Like session
 * tokens it starts with the home country's code, so any country's gateway can answer a receipt
 * request for a record kept elsewhere with `wrong_country` and nothing else. 20 characters of
 * [0-9a-z] carry 103 bits of randomness.
 */
export function newRecordId(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`rec_${country.toLowerCase()}`, 20);
}

const RECORD_ID = /^rec_([a-z]{2})[0-9a-z]{20}$/;

export function isRecordId(value: unknown): value is string {
  return typeof value === 'string' && RECORD_ID.test(value);
}

/** The home country (`DE`) of a well-formed record id; undefined for anything else. */
export function countryOfRecordId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return RECORD_ID.exec(id)?.[1]?.toUpperCase();
}

/**
 * `imp_<cc><20>`: a consent record import's report, kept in the country that ran the import; the
 * code lets another country answer with `wrong_country`. Ids made before the country was part of
 * them (`imp_<20>`) are still ids (countryOfImportId: none).
 */
export function newImportId(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`imp_${country.toLowerCase()}`, 20);
}

const IMPORT_ID = /^imp_([a-z]{2})?[0-9a-z]{20}$/;

export function isImportId(value: unknown): value is string {
  return typeof value === 'string' && IMPORT_ID.test(value);
}

/** The country an import's id names (upper case), or undefined for an older id or no import id. */
export function countryOfImportId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return IMPORT_ID.exec(id)?.[1]?.toUpperCase();
}
