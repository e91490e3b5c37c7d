/** Query parameters whose values say nothing about a person and no credential: kept in the access log. */
const PLAIN_PARAMETERS = new Set(['limit', 'cursor', 'type', 'from', 'flavor', 'device', 'theme', 'locale', 'purposes', 'status', 'kind', 'lang']);

/**
 * A request URL as the access log keeps it: the path with its credentials hidden (loggablePath), and of the query only the names of the
 * parameters, with values kept for those in a short list of harmless ones (paging, filters, display
 * options). Everything else (an e-mail in `subject[email]`, an organisation's `subject[external_id]`,
 * a `consent_token`) is written as `…`: logs may be shipped anywhere, personal data may not.
 */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = loggablePath(mark < 0 ? url : url.slice(0, mark));
  if (mark < 0) return path;
  const query = new URLSearchParams(url.slice(mark + 1));
  const kept = [...query].map(([name, value]) => `${encodeURIComponent(name)}=${PLAIN_PARAMETERS.has(name) ? encodeURIComponent(value) : '…'}`);
  return `${path}?${kept.join('&')}`;
}

/**
 * Path segments that are credentials: a decision session's token (`dts_<cc>…`, the participant's only
 * credential, in the hosted pages' and the participant API's paths) and a capture's (`cap_<cc>…`),
 * kept as their kind and country only; and the signed token of a preview link (`/preview/<token>`).
 * Record, flow and other ids name a resource and grant nothing: they stay.
 */
const CREDENTIAL_SEGMENT = /\/((?:dts|cap)_[a-z]{2})[0-9a-z]+(?=\/|$)/g;
const PREVIEW_LINK = /^\/preview\/[^/]+/;

function loggablePath(path: string): string {
  return path.replace(CREDENTIAL_SEGMENT, '/$1…').replace(PREVIEW_LINK, '/preview/…');
}
