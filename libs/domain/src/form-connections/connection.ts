import { randomBytes } from 'node:crypto';
import { prefixedRandomString } from '../identifiers';

/** The hosted form builders a connection can be made to. Typeform is the one modelled (docs/form-builders.md). */
export const FORM_PLATFORMS = ['typeform'] as const;
export type FormPlatform = (typeof FORM_PLATFORMS)[number];

/** The `collection_channel` of every record a form-builder connection makes. */
export const FORM_PLATFORM_CHANNEL = 'form_platform_webhook';

export const FORM_CONNECTION_SECRET_PREFIX = 'fcsec_';

const FORM_CONNECTION_ID = /^fcn_([a-z]{2})[0-9a-z]{20}$/;

/**
 * `fcn_<cc><20>`: a connection lives in the country whose endpoint created it (its webhook URL points
 * there). Like record ids it starts with that country's code, so another country's gateway answers
 * `wrong_country` and nothing else.
 */
export function newFormConnectionId(country: string): string {
  if (!/^[A-Za-z]{2}$/.test(country)) throw new RangeError(`country must be two letters, got ${country}`);
  return prefixedRandomString(`fcn_${country.toLowerCase()}`, 20);
}

export function isFormConnectionId(value: unknown): value is string {
  return typeof value === 'string' && FORM_CONNECTION_ID.test(value);
}

/** The home country (`US`) of a well-formed connection id; undefined for anything else. */
export function countryOfFormConnectionId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  return FORM_CONNECTION_ID.exec(id)?.[1]?.toUpperCase();
}

/**
 * The secret the organisation pastes into the form builder's webhook settings: `fcsec_` + 32 random
 * bytes as base64url. The HMAC key is the whole string's UTF-8 bytes, as Typeform uses it.
 */
export function newFormConnectionSecret(): string {
  return FORM_CONNECTION_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Associated data binding a sealed value to its connection and role, so a sealed secret copied onto
 * another row, or into the other column of the same row, does not open there.
 */
export function formConnectionSealContext(connectionId: string, role: 'secret' | 'previous_secret' | 'personal_access_token'): string {
  return `form_connection:${connectionId}:${role}`;
}
