import { GatewayEnvironment } from '@dcr/config';
import { ServiceContext } from '@dcr/service-kit';
import { renderProofKey } from '../src/sdk/render-proofs';
import { PreviewTokens, previewTokenKey } from '../src/sdk/preview-tokens';

const base = { SUBJECT_REF_KEY: 'k'.repeat(40), COUNTRY: 'US' };
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
const contextOf = (env: Partial<GatewayEnvironment>) => ({ env }) as unknown as ServiceContext;

describe('the preview link key', () => {
  it('is TEMPLATE_PREVIEW_KEY when set', () => {
    const explicit = Buffer.alloc(32, 9).toString('base64');
    expect(Buffer.from(previewTokenKey({ ...base, TEMPLATE_PREVIEW_KEY: explicit })).toString('base64')).toBe(explicit);
  });

  it('is otherwise derived per country from the render proof key, and is never that key', () => {
    const derived = previewTokenKey(base);
    expect(derived).toHaveLength(32);
    expect(same(previewTokenKey(base), derived)).toBe(true);
    expect(same(previewTokenKey({ ...base, COUNTRY: 'DE' }), derived)).toBe(false);
    expect(same(derived, renderProofKey(base))).toBe(false);
    // Production sets FIELD_RENDER_PROOF_KEY: the preview key follows it.
    const production = { ...base, FIELD_RENDER_PROOF_KEY: Buffer.alloc(32, 1).toString('base64') };
    expect(same(previewTokenKey(production), derived)).toBe(false);
    expect(same(previewTokenKey(production), renderProofKey(production))).toBe(false);
  });

  it('signs links that the replicas of a country accept and another country refuses', () => {
    const facts = { template_id: 'tpl_us0123456789abcdefghij', device: 'desktop' as const, theme: 'light' as const };
    const { token } = new PreviewTokens(contextOf(base)).sign(facts);
    expect(new PreviewTokens(contextOf(base)).verify(token)).toMatchObject(facts);
    expect(() => new PreviewTokens(contextOf({ ...base, COUNTRY: 'DE' })).verify(token)).toThrow('signature does not verify');
  });
});
