import { validationFailed } from '../errors';
import type { Environment } from '../credentials';

export type ParsedOrigin = { ok: true; origin: string } | { ok: false; reason: string };

interface OriginParts {
  scheme: 'http' | 'https';
  /** Lower-case ASCII host (punycode for IDNs), IPv6 in brackets. */
  host: string;
  /** Empty when the default port of the scheme. */
  port: string;
  origin: string;
}

const MAX_ORIGIN_LENGTH = 2048;
/** Hosts that sandbox applications may register with plain http. */
export const SANDBOX_HTTP_HOSTS: readonly string[] = ['localhost', '127.0.0.1'];

const SCHEME_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const AUTHORITY = /^(\[[^\]]*\]|[^:[\]]*)(?::([^:]*))?$/;
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

function parse(input: unknown): OriginParts | { ok: false; reason: string } {
  if (typeof input !== 'string') return fail('origin must be a string');
  if (input.length === 0) return fail('origin must not be empty');
  if (input.length > MAX_ORIGIN_LENGTH) return fail('origin is too long');
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/u.test(input)) return fail('origin must not contain whitespace or control characters');

  const scheme = SCHEME_PREFIX.exec(input);
  if (!scheme) return fail('origin must have the form scheme://host[:port]');
  const schemeName = scheme[1].toLowerCase();
  if (schemeName !== 'http' && schemeName !== 'https') return fail('scheme must be http or https');

  // Checked on the raw text: the URL parser would add a "/" path and hide a trailing slash.
  const rest = input.slice(scheme[0].length);
  const end = rest.search(/[/?#\\]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority.includes('@')) return fail('origin must not contain user information');
  if (end !== -1) {
    const tail = rest.slice(end);
    if (tail === '/') return fail('origin must not end with a slash');
    if (tail[0] === '/' || tail[0] === '\\') return fail('origin must not contain a path');
    if (tail[0] === '?') return fail('origin must not contain a query');
    return fail('origin must not contain a fragment');
  }

  const parts = AUTHORITY.exec(authority);
  if (!parts || parts[1] === '') return fail('host is not valid');
  if (parts[2] !== undefined && !/^\d{1,5}$/.test(parts[2])) return fail('port must be between 1 and 65535');
  if (parts[2] !== undefined && (Number(parts[2]) < 1 || Number(parts[2]) > 65535)) {
    return fail('port must be between 1 and 65535');
  }

  let url: URL;
  try {
    url = new URL(`${schemeName}://${authority}`);
  } catch {
    return fail('host is not valid');
  }
  const host = url.hostname; // lower-cased, IDN to punycode, IPv4 shorthand expanded
  if (!isValidHost(host)) return fail('host is not valid');
  const port = url.port; // '' for the scheme's default port
  return { scheme: schemeName, host, port, origin: `${schemeName}://${host}${port ? `:${port}` : ''}` };
}

function isValidHost(host: string): boolean {
  if (host.startsWith('[')) return host.endsWith(']'); // the URL parser has validated the IPv6 address
  if (host.length > 253) return false;
  return host.split('.').every((label) => DNS_LABEL.test(label));
}

/**
 * Parses a web origin written as `scheme://host[:port]`: scheme http or https; no user information,
 * path (a lone trailing `/` included), query, fragment or whitespace. The answer is normalised:
 * lower-case scheme and host, IDNs as punycode, the default port (80 for http, 443 for https) removed.
 * Host names must be DNS names (letters, digits, hyphens; no wildcards, no trailing dot), IPv4
 * addresses or bracketed IPv6 addresses.
 */
export function parseOrigin(input: string): ParsedOrigin {
  const parsed = parse(input);
  return 'ok' in parsed ? parsed : { ok: true, origin: parsed.origin };
}

/**
 * The normalised origin to register for an application, or a `validation_failed` error naming
 * `allowed_origin.origin`. Production applications need https everywhere (localhost included);
 * sandbox applications accept https anywhere and http only for `localhost` and `127.0.0.1`.
 */
export function validateAllowedOrigin(input: string, environment: Environment): string {
  const parsed = parse(input);
  if ('ok' in parsed) throw refuseOrigin(parsed.reason);
  // Anything but 'sandbox' gets the production rule: the strict reading is the safe one.
  if (environment !== 'sandbox' && parsed.scheme !== 'https') {
    throw refuseOrigin('production applications require https origins');
  }
  if (parsed.scheme === 'http' && !SANDBOX_HTTP_HOSTS.includes(parsed.host)) {
    throw refuseOrigin('sandbox applications accept http only for localhost and 127.0.0.1');
  }
  return parsed.origin;
}

const refuseOrigin = (reason: string) =>
  validationFailed([{ field: 'allowed_origin.origin', reason }], 'The allowed origin is not valid');

/**
 * Whether a browser's `Origin` is among an application's registered origins. Both sides are
 * normalised, then compared exactly; a sandbox application's `http://localhost` or
 * `http://127.0.0.1` registered without a port matches that host on any port. A malformed request
 * origin (the literal `null` included) never matches, a malformed registration is skipped, and a
 * production application never matches a plain-http request origin.
 */
export function originMatches(requestOrigin: string, registered: readonly string[], environment: Environment): boolean {
  const request = parse(requestOrigin);
  if ('ok' in request) return false;
  if (environment !== 'sandbox' && request.scheme !== 'https') return false;
  for (const entry of registered) {
    const allowed = parse(entry);
    if ('ok' in allowed) continue;
    if (allowed.origin === request.origin) return true;
    if (
      environment === 'sandbox' &&
      allowed.scheme === 'http' &&
      allowed.port === '' &&
      SANDBOX_HTTP_HOSTS.includes(allowed.host) &&
      request.scheme === 'http' &&
      request.host === allowed.host
    ) {
      return true;
    }
  }
  return false;
}
