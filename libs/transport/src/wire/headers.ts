/** Request metadata that travels beside the payload (NATS headers, or alongside in-process). */
export type TransportHeaders = Record<string, string>;

// An HTTP-style token: NATS refuses other header names, so both transports refuse them alike.
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * Lower-cases names (lookups are case-insensitive on both transports) and drops empty entries.
 * Values may not contain line breaks: NATS headers are line-based.
 */
export function normalizeHeaders(...sources: Array<Record<string, unknown> | undefined>): TransportHeaders {
  const headers: TransportHeaders = {};
  for (const source of sources) {
    for (const [rawName, rawValue] of Object.entries(source ?? {})) {
      if (rawValue === undefined || rawValue === null) continue;
      const name = rawName.toLowerCase();
      const value = String(rawValue);
      if (!HEADER_NAME.test(name)) throw new TypeError(`Header name "${rawName}" is not a valid token`);
      if (/[\r\n]/.test(value)) throw new TypeError(`Header "${rawName}" must not contain line breaks`);
      headers[name] = value;
    }
  }
  return headers;
}
