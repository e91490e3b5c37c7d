/**
 * The deprecated `/api/v1/consent_sessions` family (superseded by `/api/v1/decisions`) answers with
 * RFC 9745 `Deprecation`, RFC 8594 `Sunset` and a `Link` to its successor on every response.
 */
export const DEPRECATED_PREFIX = '/api/v1/consent_sessions';
/** Deprecated since 2025-11-22T00:00:00Z (a structured-field date: seconds since the epoch). */
export const DEPRECATION = '@1763769600';
export const SUNSET = 'Fri, 31 Dec 2027 23:59:59 GMT';
export const SUCCESSOR_LINK = '</api/v1/decisions>; rel="successor-version"';

export function deprecationHeaders(url: string): Record<string, string> | undefined {
  if (!url.startsWith(DEPRECATED_PREFIX)) return undefined;
  const next = url.charAt(DEPRECATED_PREFIX.length);
  if (next !== '' && next !== '/' && next !== '?') return undefined;
  return { deprecation: DEPRECATION, sunset: SUNSET, link: SUCCESSOR_LINK };
}
