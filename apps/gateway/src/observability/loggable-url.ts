/** Query parameters whose values say nothing about a person and no credential: kept in the access log. */
const PLAIN_PARAMETERS = new Set(['limit', 'cursor', 'type', 'from', 'flavor', 'device', 'theme', 'locale', 'purposes', 'status', 'kind', 'lang']);

/**
 * A request URL as the access log keeps it: the path, and of the query only the names of the
 * parameters, with values kept for those in a short list of harmless ones (paging, filters, display
 * options). Everything else (an e-mail in `subject[email]`, an organisation's `subject[external_id]`,
 * a `consent_token`) is written as `…`: logs may be shipped anywhere, personal data may not.
 */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const query = new URLSearchParams(url.slice(mark + 1));
  const kept = [...query].map(([name, value]) => `${encodeURIComponent(name)}=${PLAIN_PARAMETERS.has(name) ? encodeURIComponent(value) : '…'}`);
  return `${url.slice(0, mark)}?${kept.join('&')}`;
}
