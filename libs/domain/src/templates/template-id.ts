import { prefixedRandomString } from '../identifiers';

/**
 * `tpl_<cc><20>`: a preview template, a handle on one flow version that an organisation's tooling
 * previews. It lives in the country whose endpoint created it; like record ids its id starts with
 * that country's code, so another country's gateway answers `wrong_country` and nothing else.
 * 20 characters of [0-9a-z] carry 103 bits of randomness.
 */
export function newTemplateId(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`tpl_${country.toLowerCase()}`, 20);
}

const TEMPLATE_ID = /^tpl_([a-z]{2})[0-9a-z]{20}$/;

export function isTemplateId(value: unknown): value is string {
  return typeof value === 'string' && TEMPLATE_ID.test(value);
}

/** The home country (`US`) of a well-formed template id; undefined for anything else. */
export function countryOfTemplateId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return TEMPLATE_ID.exec(id)?.[1]?.toUpperCase();
}
