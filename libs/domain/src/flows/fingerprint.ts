import { canonicalDigest } from './canonical-json';
import { FlowTerms, PurposeMechanism } from './flow-terms';

/**
 * Lower-case hex SHA-256 over canonicalJson(terms): the whole normalised terms, name and pattern
 * included. Identical terms give the same fingerprint whatever the key order they were built in.
 */
export function termsFingerprint(terms: FlowTerms): string {
  return canonicalDigest(terms);
}

/** Whether two term sets differ (by fingerprint). */
export function termsDiffer(a: FlowTerms, b: FlowTerms): boolean {
  return termsFingerprint(a) !== termsFingerprint(b);
}

/** What the person is shown: the items the receipt's notice fingerprint covers. */
export interface NoticeContent {
  locale: string;
  title: string | null;
  description: string | null;
  policy_url: string | null;
  purposes: Array<{ name: string; label: string; description: string | null; mechanism: PurposeMechanism; required: boolean }>;
}

/**
 * The notice as the receipt schema defines its fingerprint: locale, presentation title and
 * description, policy URL, and the purpose rows (name, label, description, mechanism, required)
 * sorted by name.
 */
export function noticeContent(terms: FlowTerms): NoticeContent {
  return {
    locale: terms.locale,
    title: terms.title,
    description: terms.description,
    policy_url: terms.policy_url,
    purposes: terms.purposes
      .map((purpose) => ({
        name: purpose.key,
        label: purpose.label,
        description: purpose.description,
        mechanism: purpose.mechanism,
        required: purpose.required,
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

/**
 * The receipt's notice fingerprint (`privacy_notice` version): lower-case hex SHA-256 of the canonical
 * JSON of noticeContent(terms). Same content, same version; any drift gives a new one.
 */
export function noticeFingerprint(terms: FlowTerms): string {
  return canonicalDigest(noticeContent(terms));
}
