import { createHash } from 'node:crypto';
import { FieldIssue, validationFailed } from '../errors';
import { FlowTerms } from '../flows/flow-terms';

/*
 * The wording verdict of a capture: each label digest the browser attests (`labels`, purpose key to
 * the SHA-256 in hex of the label text on the page) compared with the published label of the flow
 * version. A different digest is `drift`: recorded, never refused. What is refused is a `labels`
 * entry that cannot be compared at all (a key that is no purpose of the flow, a value that is no
 * SHA-256 in hex), each by name in one 422, like every other field of the body.
 */

export type WordingVerdict = Record<string, 'match' | 'drift'>;

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** Characters that show nothing of their own (soft hyphen, zero-width space, word joiner, zero-width no-break space). */
const INVISIBLE = /[\u00AD\u200B\u2060\uFEFF]/g;

/**
 * The published wording of a purpose, as a capture attests it: SHA-256 (hex) of the label text in
 * Unicode's composed form (NFC), without the characters that show nothing, whitespace collapsed and
 * trimmed, as the client script reads a label (libs/client-sdk labelText): a label that shows the
 * published wording is a match, whatever line breaks, double spaces, soft hyphens or decomposed
 * accents the page or the published text holds (the `wording` option writes it as published).
 */
export function labelDigest(label: string): string {
  return createHash('sha256').update(label.normalize('NFC').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim(), 'utf8').digest('hex');
}

/**
 * The verdict per purpose of the labels given, or null when they compare nothing (absent, or `{}`:
 * no verdict, as without labels). Throws `validation_failed` naming every entry that cannot be
 * compared (`labels.<key>`), in the order given.
 */
export function wordingVerdict(terms: FlowTerms, labels: Record<string, unknown> | undefined): WordingVerdict | null {
  if (labels === undefined || labels === null) return null;
  const entries = Object.entries(labels);
  if (entries.length === 0) return null;
  const issues: FieldIssue[] = [];
  const verdict: WordingVerdict = {};
  for (const [key, digest] of entries) {
    const purpose = terms.purposes.find((candidate) => candidate.key === key);
    if (!purpose) issues.push({ field: `labels.${key}`, reason: 'not a purpose of this flow' });
    else if (typeof digest !== 'string' || !SHA256_HEX.test(digest)) issues.push({ field: `labels.${key}`, reason: 'must be the SHA-256 (hex) of the label text' });
    // Hex in either case: the digest is the same.
    else verdict[key] = digest.toLowerCase() === labelDigest(purpose.label) ? 'match' : 'drift';
  }
  if (issues.length > 0) throw validationFailed(issues);
  return verdict;
}
