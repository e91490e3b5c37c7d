import { createHash } from 'node:crypto';
import { labelDigest } from './captures';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
/** The client script's reading of a label (libs/client-sdk service-forms labelText). */
const labelText = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('labelDigest', () => {
  it("reads a published label as the client script reads the label on the page: whitespace collapsed, trimmed", () => {
    const published = 'Analytics  cookies,\n  to improve the site ';
    // What the browser attests for a label showing that wording (the `wording` option writes it verbatim).
    expect(labelDigest(published)).toBe(sha256(labelText(published)));
    expect(labelDigest(published)).toBe(sha256('Analytics cookies, to improve the site'));
    // Other words are still drift.
    expect(labelDigest(published)).not.toBe(sha256(labelText('Analytics cookies')));
  });
});
