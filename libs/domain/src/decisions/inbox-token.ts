import { randomBytes } from 'node:crypto';

/**
 * `inb_<cc><43>`: a person's inbox token, the home country's code and 32 random bytes (base64url).
 * The country lets any country's gateway answer a token from elsewhere with `wrong_country` from the
 * token alone, as session tokens (`dts_<cc>…`) do: no lookup, no directory, nothing sent across the
 * border. Clients must not parse it; the country is not personal data, and it is exactly what that
 * answer discloses anyway (to the holder of the token, who can try it at each country).
 *
 * Tokens issued before tokens named their country are `inb_<43>` (live 12 hours): still taken, and
 * naming no country.
 */
const INBOX_TOKEN = /^inb_([a-z]{2})?[A-Za-z0-9_-]{43}$/;
const COUNTRY = /^[A-Za-z]{2}$/;
/** Random bytes of an inbox token: 256 bits, 43 base64url characters. */
const INBOX_TOKEN_BYTES = 32;

/** A new inbox token of `country`'s inbox. */
export function newInboxToken(country: string): string {
  if (!COUNTRY.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return `inb_${country.toLowerCase()}${randomBytes(INBOX_TOKEN_BYTES).toString('base64url')}`;
}

/** Whether `value` has an inbox token's form (one naming its country, or one from before). */
export function isInboxToken(value: unknown): value is string {
  return typeof value === 'string' && INBOX_TOKEN.test(value);
}

/** The country (`DE`) a well-formed inbox token names; undefined for one naming none, and for anything else. */
export function countryOfInboxToken(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  return INBOX_TOKEN.exec(token)?.[1]?.toUpperCase();
}
