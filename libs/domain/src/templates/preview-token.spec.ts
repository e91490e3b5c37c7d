import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { DomainError } from '../errors';
import { PREVIEW_TOKEN_LIFETIME_SECONDS, PreviewTokenFacts, signPreviewToken, verifyPreviewToken } from './preview-token';

const key = new Uint8Array(Buffer.alloc(32, 5));
const otherKey = new Uint8Array(Buffer.alloc(32, 6));
const facts: PreviewTokenFacts = { template_id: 'tpl_us0123456789abcdefghij', device: 'mobile', theme: 'dark' };
const issuedAt = new Date('2025-03-02T08:14:02.000Z');
const later = (seconds: number) => new Date(issuedAt.getTime() + seconds * 1000);

function refusal(run: () => unknown, code: 'not_found' | 'gone'): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(code);
    return error as DomainError;
  }
  throw new Error('expected the preview token to be refused');
}

/** A token made the documented way, for facts the signer would never sign. */
function handMade(templateId: string, flags: string, expiry: number, signingKey = key): string {
  const mac = createHmac('sha256', signingKey).update(`service-template-preview.v1|${templateId}|${flags}|${expiry}`, 'utf8').digest('base64url');
  return `${templateId}.${flags}.${expiry}.${mac}`;
}

describe('preview tokens', () => {
  it('round-trip the template, the device and the theme, valid ten minutes, short enough for a path segment', () => {
    const { token, expiresAt } = signPreviewToken(facts, key, issuedAt);
    expect(expiresAt).toBe('2025-03-02T08:24:02.000Z');
    expect(token).toMatch(/^tpl_us0123456789abcdefghij\.md\.1740903842\.[A-Za-z0-9_-]{43}$/);
    expect(token.length).toBeLessThanOrEqual(90);
    expect(verifyPreviewToken(token, key, later(60))).toEqual({ ...facts, expires_at: expiresAt });
    for (const device of ['desktop', 'mobile'] as const) {
      for (const theme of ['light', 'dark'] as const) {
        const { token: each } = signPreviewToken({ ...facts, device, theme }, key, issuedAt);
        expect(verifyPreviewToken(each, key, later(1))).toMatchObject({ device, theme });
      }
    }
    expect(token).toBe(handMade(facts.template_id, 'md', 1740903842));
  });

  it('are gone (410) once ten minutes have passed', () => {
    const { token } = signPreviewToken(facts, key, issuedAt);
    expect(verifyPreviewToken(token, key, later(PREVIEW_TOKEN_LIFETIME_SECONDS - 1)).template_id).toBe(facts.template_id);
    const gone = refusal(() => verifyPreviewToken(token, key, later(PREVIEW_TOKEN_LIFETIME_SECONDS + 31)), 'gone');
    expect(gone.status).toBe(410);
    expect(gone.message).toContain('expired');
  });

  it('are not found (404) when forged, altered or malformed; the signature is checked before the age', () => {
    const { token } = signPreviewToken(facts, key, issuedAt);
    const forged = refusal(() => verifyPreviewToken(token, otherKey, later(1)), 'not_found');
    expect(forged.status).toBe(404);
    expect(forged.message).toContain('signature does not verify');
    // An old link signed with another key is a forgery, not an expired link.
    expect(refusal(() => verifyPreviewToken(token, otherKey, later(PREVIEW_TOKEN_LIFETIME_SECONDS * 10)), 'not_found').message).toContain('signature');
    const [id, flags, expiry, mac] = token.split('.');
    for (const altered of [
      [id.replace('0123', '0124'), flags, expiry, mac],
      [id, 'dd', expiry, mac],
      [id, flags, String(Number(expiry) + 600), mac],
      [id, flags, expiry, `${mac.slice(0, 42)}${mac[42] === 'A' ? 'B' : 'A'}`],
    ]) {
      expect(refusal(() => verifyPreviewToken(altered.join('.'), key, later(1)), 'not_found').message).toContain('signature does not verify');
    }
    for (const junk of ['', 'not a token', `${token}.x`, token.replace('.md.', '.xx.'), 'tpl_welcome.dl.1740903842.' + mac, 'x'.repeat(3000)]) {
      expect(refusal(() => verifyPreviewToken(junk, key, later(1)), 'not_found').message).toContain('not a preview token');
    }
    refusal(() => verifyPreviewToken(undefined as unknown as string, key), 'not_found');
  });

  it('refuse a correctly signed token that claims more than ten minutes', () => {
    const nowSeconds = Math.floor(issuedAt.getTime() / 1000);
    expect(verifyPreviewToken(handMade(facts.template_id, 'dl', nowSeconds + PREVIEW_TOKEN_LIFETIME_SECONDS), key, issuedAt).device).toBe('desktop');
    expect(refusal(() => verifyPreviewToken(handMade(facts.template_id, 'dl', nowSeconds + 86400), key, issuedAt), 'not_found').message).toContain('longer than ten minutes');
  });

  it('never verify a change of any character', () => {
    const { token } = signPreviewToken(facts, key, issuedAt);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_-.ABC'), (at, character) => {
        fc.pre(token[at] !== character);
        const changed = token.slice(0, at) + character + token.slice(at + 1);
        expect(() => verifyPreviewToken(changed, key, later(1))).toThrow(DomainError);
      }),
    );
  });

  it('are made only for template ids, devices and themes', () => {
    expect(() => signPreviewToken({ ...facts, template_id: 'tpl_welcome' }, key)).toThrow(RangeError);
    expect(() => signPreviewToken({ ...facts, device: 'tablet' as 'mobile' }, key)).toThrow(RangeError);
    expect(() => signPreviewToken({ ...facts, theme: 'sepia' as 'dark' }, key)).toThrow(RangeError);
  });
});
