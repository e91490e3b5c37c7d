import { prefixedRandomString } from '../identifiers';

/**
 * `dts_<cc><30>`: the home country's code starts the opaque part, so any country's gateway can
 * answer a token from elsewhere with `wrong_country` without a directory lookup. Clients must not
 * parse it; the country is not personal data, and it is exactly what that answer discloses anyway.
 * 30 characters of [0-9a-z] carry 155 bits of randomness.
 */
export function newSessionToken(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`dts_${country.toLowerCase()}`, 30);
}

const SESSION_TOKEN = /^dts_([a-z]{2})[0-9a-z]{30}$/;

export function isSessionToken(value: unknown): value is string {
  return typeof value === 'string' && SESSION_TOKEN.test(value);
}

/** The home country (`US`) of a well-formed session token; undefined for anything else. */
export function countryOfSessionToken(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  return SESSION_TOKEN.exec(token)?.[1]?.toUpperCase();
}
