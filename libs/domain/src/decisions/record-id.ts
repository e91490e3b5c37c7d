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
