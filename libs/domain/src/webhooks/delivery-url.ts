import { isIP } from 'node:net';
import { DomainError } from '../errors';
import { forbiddenAddressReason } from './forbidden-addresses';

/**
 * `environment`: the application's. `localTargets`: the service runs on the developer's own machine
 * (NODE_ENV development or test), where a sandbox application's receiver on 127.0.0.1 is theirs.
 * In a production deployment it is the service's own loopback, so every application there gets the
 * production rule.
 */
export type WebhookUrlPolicy = { environment: 'sandbox' | 'production'; localTargets?: boolean };

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Hosts a sandbox subscription may reach over plain http: the developer's own machine. */
export const SANDBOX_HTTP_WEBHOOK_HOSTS: readonly string[] = ['127.0.0.1', '[::1]', 'localhost'];

const SCHEME_PREFIX = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
// Letters, digits, hyphens; underscores too, which DNS carries and some real hosts use.
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * Validates a subscription URL and returns it normalised (lower-case scheme and host, IDN as
 * punycode, default port dropped, `/` path added, unsafe characters percent-encoded), which is the
 * string to store and deliver to.
 *
 * Always: absolute http(s) with `//`, no credentials (they would be stored in clear and sent on every
 * request), no fragment (never sent, so it can only mislead), no backslashes or whitespace, at most
 * 2048 characters, a host made of DNS labels or an IP literal, without a trailing dot.
 * Production: https only, and the host may not be `localhost`, `*.localhost`, a single-label name
 * (an intranet name never resolves to a public host) or a literal address of a range
 * isForbiddenDeliveryAddress refuses. Only literal hosts are judged here; names are judged again on
 * every delivery, against the addresses they resolve to.
 * Sandbox, where the service runs on the developer's machine (`localTargets`): https anywhere, plain
 * http only to 127.0.0.1, [::1] or localhost on any port. Sandbox in a production deployment: the
 * production rule (the service's loopback and internal network are no developer's receiver).
 *
 * Refusals are `validation_failed` with one detail `{field: 'url', reason}`.
 */
export function validateWebhookUrl(input: string, policy: WebhookUrlPolicy): string {
  const url = parseWebhookUrl(input);
  const scheme = url.protocol.slice(0, -1);
  const host = url.hostname; // IPv6 keeps its brackets
  // Anything but a sandbox on a developer's machine gets the production rule: the strict reading is the safe one.
  if (policy?.environment !== 'sandbox' || policy.localTargets !== true) {
    const which = policy?.environment === 'sandbox' ? 'webhooks of a production deployment' : 'production webhooks';
    if (scheme !== 'https') throw refuseUrl(`${which} require an https URL`);
    if (host === 'localhost' || host.endsWith('.localhost')) throw refuseUrl(`${which} cannot be delivered to localhost`);
    const literal = host.startsWith('[') ? host.slice(1, -1) : host;
    if (isIP(literal) !== 0) {
      const reason = forbiddenAddressReason(literal);
      if (reason) throw refuseUrl(`${which} cannot be delivered to ${reason} addresses`);
    } else if (!host.includes('.')) {
      throw refuseUrl(`${which} need a fully qualified host name`);
    }
  } else if (scheme === 'http' && !SANDBOX_HTTP_WEBHOOK_HOSTS.includes(host)) {
    throw refuseUrl('sandbox webhooks accept http only for 127.0.0.1, [::1] and localhost');
  }
  return url.href;
}

/** Everything that holds whatever the environment; the WHATWG parser then normalises the URL. */
function parseWebhookUrl(input: unknown): URL {
  if (typeof input !== 'string') throw refuseUrl('url must be a string');
  if (input.length === 0) throw refuseUrl('url must not be empty');
  if (input.length > MAX_WEBHOOK_URL_LENGTH) throw refuseUrl(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/u.test(input)) throw refuseUrl('url must not contain whitespace or control characters');
  // Checked on the raw text: the URL parser would silently accept `https:host` and turn `\` into `/`.
  const scheme = SCHEME_PREFIX.exec(input);
  if (!scheme) throw refuseUrl('url must be absolute, starting with https:// or http://');
  const schemeName = scheme[1].toLowerCase();
  if (schemeName !== 'http' && schemeName !== 'https') throw refuseUrl('url scheme must be https or http');
  if (input.includes('\\')) throw refuseUrl('url must not contain backslashes');
  if (input.includes('#')) throw refuseUrl('url must not contain a fragment');
  const rest = input.slice(scheme[0].length);
  const authorityEnd = rest.search(/[/?]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  if (authority.includes('@')) throw refuseUrl('url must not contain credentials');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw refuseUrl('url is not a valid URL');
  }
  // The normalised form can grow (punycode, percent-encoding); what is stored must fit too.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) throw refuseUrl(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (!isValidHost(url.hostname)) throw refuseUrl('url host is not valid');
  if (url.port === '0') throw refuseUrl('url port must be between 1 and 65535');
  return url;
}

function isValidHost(host: string): boolean {
  if (host.startsWith('[')) return true; // the URL parser has validated the IPv6 literal
  if (host.length === 0 || host.length > 253) return false;
  return host.split('.').every((label) => HOST_LABEL.test(label));
}

const refuseUrl = (reason: string) =>
  new DomainError('validation_failed', 'The webhook URL is not valid', [{ field: 'url', reason }]);
