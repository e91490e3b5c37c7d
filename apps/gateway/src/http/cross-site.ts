import { GatewayEnvironment } from '@dcr/config';
import type { FastifyRequest } from 'fastify';

/** `value`'s origin (`scheme://host[:port]`, lower case, no default port), else undefined. */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** The gateway's own origins: PUBLIC_BASE_URL's when set, and the one the request reached. */
export function ownOrigins(env: GatewayEnvironment, request: FastifyRequest): string[] {
  return [env.PUBLIC_BASE_URL, `${request.protocol}://${request.host}`].flatMap((url) => (url ? (originOf(url) ?? []) : []));
}

/**
 * Whether a browser sent this request from another site (a form another website posts, as in login
 * CSRF): `Sec-Fetch-Site`, when sent, is other than `same-origin` or `none` (the person's own
 * navigation), or `Origin`, when sent, is none of the gateway's own. `Origin: null` (sent under a
 * `no-referrer` policy, or from a sandboxed frame) passes only when `Sec-Fetch-Site` says
 * `same-origin`. A request with neither header (an old browser, curl) is not taken for one.
 */
export function sentFromAnotherSite(request: FastifyRequest, own: readonly string[]): boolean {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (Array.isArray(site) || Array.isArray(origin)) return true;
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  if (origin === undefined) return false;
  if (origin === 'null') return site !== 'same-origin';
  const sent = originOf(origin);
  return sent === undefined || !own.includes(sent);
}
