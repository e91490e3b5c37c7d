import { canonicalDigest, DomainError, FlowTerms } from '@dcr/domain';
import { fullFormats } from 'ajv-formats/dist/formats';
import type { PrivacyNotice } from '../schema';

/** One flow-visible purpose row, as the notice fingerprint covers it. */
export interface NoticePurposeRow {
  name: string;
  label: string;
  description?: string | null;
  mechanism: string;
  required: boolean;
}

/** Exactly what the person is shown, in the items the notice fingerprint covers. */
export interface NoticeContentInput {
  locale: string;
  title?: string | null;
  description?: string | null;
  policyUrl?: string | null;
  purposes: readonly NoticePurposeRow[];
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The canonical object the fingerprint hashes: the items the spec lists and nothing else, an absent
 * text written as null, purpose rows sorted by name (UTF-16 code units). It is the shape of
 * `noticeContent()` in `@dcr/domain`, so for a flow's full purpose list presented in the flow's own
 * locale the fingerprint equals the domain's `noticeFingerprint(terms)`.
 */
function fingerprintedContent(input: NoticeContentInput) {
  const seen = new Set<string>();
  for (const row of input.purposes) {
    if (seen.has(row.name)) {
      throw new DomainError('validation_failed', 'The notice is not valid', [{ field: 'purposes', reason: `purpose ${row.name} appears twice` }]);
    }
    seen.add(row.name);
  }
  return {
    locale: input.locale,
    title: input.title ?? null,
    description: input.description ?? null,
    policy_url: input.policyUrl ?? null,
    purposes: input.purposes
      .map((row) => ({
        name: row.name,
        label: row.label,
        description: row.description ?? null,
        mechanism: row.mechanism,
        required: row.required,
      }))
      .sort(byName),
  };
}

/**
 * The notice fingerprint (spec "The notice fingerprint"): lower-case hex SHA-256 of the RFC 8785
 * canonical JSON over exactly locale, presentation title and description, policy URL and the
 * flow-visible purpose rows (name, label, description, mechanism, required) sorted by name. Same
 * content gives the same fingerprint whatever the key or row order; any drift in a listed item gives a
 * new one; nothing else (consent duration, retention, jurisdiction, ...) takes part.
 */
export function noticeFingerprint(input: NoticeContentInput): string {
  return canonicalDigest(fingerprintedContent(input));
}

/**
 * The notice a flow version presents: its title, description, policy URL and purpose rows, in
 * `locale` (the flow's own locale unless the decision was presented in another). `presented`
 * restricts the rows to the purposes actually shown (a consent field rendering a subset).
 */
export function noticeContentOf(terms: FlowTerms, options: { locale?: string; presented?: readonly string[] } = {}): NoticeContentInput {
  const shown = options.presented ? new Set(options.presented) : undefined;
  return {
    locale: options.locale ?? terms.locale,
    title: terms.title,
    description: terms.description,
    policyUrl: terms.policy_url,
    purposes: terms.purposes
      .filter((purpose) => !shown || shown.has(purpose.key))
      .map((purpose) => ({
        name: purpose.key,
        label: purpose.label,
        description: purpose.description,
        mechanism: purpose.mechanism,
        required: purpose.required,
      })),
  };
}

/** Hex digits of the fingerprint kept in the reference: 64 bits, ample to tell a flow's notices apart. */
export const NOTICE_REFERENCE_HASH_CHARS = 16;

/** What RFC 3986 allows in a path segment, a query or a fragment besides `%XX`: unreserved, sub-delims, `:` and `@`. */
const URI_PATH_CHARACTER = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;

/** The receipt schema's `web_url`: format `uri` (the test its validator applies), at most 2048 characters. */
const isUri = fullFormats.uri as (text: string) => boolean;
const MAX_WEB_URL_LENGTH = 2048;

/** `text` with every character RFC 3986 does not allow there (and every `%` not starting `%XX`) percent-encoded as UTF-8. */
function percentEncoded(text: string, alsoAllowed: string): string {
  return text.replace(/%(?![0-9A-Fa-f]{2})|[^%]/gu, (character) => {
    if (character === '%') return '%25';
    return URI_PATH_CHARACTER.test(character) || alsoAllowed.includes(character) ? character : encodeURIComponent(character);
  });
}

/**
 * A URL as the receipt writes it: an RFC 3986 URI, which is what the schema's `uri` format asks; or
 * undefined when it cannot be one (unparseable, or longer than 2048 characters once written so).
 * A URL that is a URI already is kept as it is. Flows take policy URLs as browsers read them
 * (WHATWG), which allows more: non-ASCII letters in the host or the path
 * (`https://beispiel.de/datenschutzerklärung`), `|`, braces or brackets in the path or the query, a
 * `%` not followed by two hex digits. Such a URL is written with its host in ASCII (punycode) and
 * everything else a URI does not allow percent-encoded as UTF-8; it names the same page.
 */
export function uriOfUrl(url: string): string | undefined {
  if (url.length <= MAX_WEB_URL_LENGTH && isUri(url)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const uri =
    `${parsed.protocol}//${parsed.host}` +
    percentEncoded(parsed.pathname, '/') +
    (parsed.search ? `?${percentEncoded(parsed.search.slice(1), '/?')}` : '') +
    (parsed.hash ? `#${percentEncoded(parsed.hash.slice(1), '/?')}` : '');
  return uri.length <= MAX_WEB_URL_LENGTH && isUri(uri) ? uri : undefined;
}

/**
 * `pii_processing.privacy_notice`: `{reference, hash, url?}`.
 * - `hash` is the full notice fingerprint (over the policy URL as the flow declares it);
 * - `reference` is `notice:<flow_id>:<first 16 hex of the fingerprint>`: versioned by content, so
 *   the same notice content of a flow always has the same reference (across flow versions too), and
 *   any drift supersedes it automatically;
 * - `url` is the policy URL as an RFC 3986 URI (uriOfUrl), only when one is declared (and can be one).
 */
export function privacyNotice(input: NoticeContentInput & { flowId: string }): Required<Pick<PrivacyNotice, 'reference' | 'hash'>> & Pick<PrivacyNotice, 'url'> {
  const hash = noticeFingerprint(input);
  const url = input.policyUrl ? uriOfUrl(input.policyUrl) : undefined;
  return {
    reference: `notice:${input.flowId}:${hash.slice(0, NOTICE_REFERENCE_HASH_CHARS)}`,
    hash,
    ...(url ? { url } : {}),
  };
}

/** How many ways of presenting one flow version's notice (locales, subsets of purposes) a memo keeps. */
const NOTICES_PER_TERMS = 64;

/**
 * The privacy notices of terms that never change (a published flow version's: its terms are frozen
 * with it), each worked out once per flow, locale and set of presented purposes instead of once per
 * receipt: the fingerprint is a canonical JSON digest of the whole notice, about 30 % of freezing a
 * Record API receipt (docs/performance.md, twenty-first session). Kept by the terms object itself,
 * so what a caller lets go of is let go of here too. Only for terms nobody changes afterwards: a
 * notice is not worked out again when the object it came from is modified.
 */
export class NoticeMemo {
  private readonly byTerms = new WeakMap<FlowTerms, Map<string, ReturnType<typeof privacyNotice>>>();

  /** `privacyNotice` of `noticeContentOf(terms, options)` for `flowId`, a fresh copy each time. */
  of(flowId: string, terms: FlowTerms, options: { locale?: string; presented?: readonly string[] } = {}): ReturnType<typeof privacyNotice> {
    let notices = this.byTerms.get(terms);
    if (!notices) this.byTerms.set(terms, (notices = new Map()));
    const key = JSON.stringify([flowId, options.locale ?? null, options.presented ?? null]);
    let notice = notices.get(key);
    if (!notice) {
      notice = privacyNotice({ flowId, ...noticeContentOf(terms, options) });
      if (notices.size >= NOTICES_PER_TERMS) notices.clear();
      notices.set(key, notice);
    }
    return { ...notice };
  }
}
