import { createHash } from 'node:crypto';
import { normaliseFlowTerms } from '../flows';
import { labelDigest, wordingVerdict } from './wording-verdict';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const terms = normaliseFlowTerms({
  name: 'Sign-up',
  pattern: 'standard',
  consent_duration: 'P1Y',
  purposes: ['newsletter', 'analytics', 'billing'],
  purpose_definitions: {
    newsletter: { label: 'Newsletter  by\n e-mail', basis: 'consent' },
    analytics: { label: 'Usage analytics', basis: 'consent' },
    billing: { label: 'Billing', basis: 'contract' },
  },
});

describe('labelDigest', () => {
  it("reads a published label as the client script reads the label on the page: whitespace collapsed, trimmed", () => {
    const published = 'Analytics  cookies,\n  to improve the site ';
    // What the browser attests for a label showing that wording (the `wording` option writes it verbatim).
    expect(labelDigest(published)).toBe(sha256('Analytics cookies, to improve the site'));
    // Other words are still drift.
    expect(labelDigest(published)).not.toBe(sha256('Analytics cookies'));
  });

  it('reads an accent typed as a letter and a combining mark as the one character, and ignores characters that show nothing', () => {
    const composed = 'Ich möchte den Newsletter erhalten';
    const decomposed = 'Ich mo\u0308chte den Newsletter erhalten';
    expect(decomposed).not.toBe(composed);
    // Published composed, shown decomposed (or the other way round): the same wording.
    expect(labelDigest(composed)).toBe(sha256(composed));
    expect(labelDigest(decomposed)).toBe(sha256(composed));
    // A CMS's soft hyphens and zero-width spaces break lines; they are no wording.
    expect(labelDigest('Ich möch\u00ADte den News\u200Bletter\u2060 erhalten\uFEFF')).toBe(sha256(composed));
    // A no-break space is a space.
    expect(labelDigest('Ich\u00A0möchte den Newsletter erhalten')).toBe(sha256(composed));
    // Letters that only look alike are still other words.
    expect(labelDigest('Ich mochte den Newsletter erhalten')).not.toBe(sha256(composed));
  });
});

describe('wordingVerdict', () => {
  it('answers match or drift per purpose, hex in either case, and no verdict for no labels', () => {
    expect(wordingVerdict(terms, { newsletter: sha256('Newsletter by e-mail').toUpperCase(), analytics: sha256('Analytics') })).toEqual({ newsletter: 'match', analytics: 'drift' });
    expect(wordingVerdict(terms, { billing: sha256('Billing') })).toEqual({ billing: 'match' });
    expect(wordingVerdict(terms, undefined)).toBeNull();
    expect(wordingVerdict(terms, {})).toBeNull();
  });

  it('refuses every label that cannot be compared by name in one 422, not only the first', () => {
    expect(() => wordingVerdict(terms, { newsletter: 'abc', lottery: sha256('x'), analytics: 7, billing: sha256('Billing') })).toThrow(
      expect.objectContaining({ code: 'validation_failed', details: [
      { field: 'labels.newsletter', reason: 'must be the SHA-256 (hex) of the label text' },
      { field: 'labels.lottery', reason: 'not a purpose of this flow' },
      { field: 'labels.analytics', reason: 'must be the SHA-256 (hex) of the label text' },
      ] }),
    );
  });
});
