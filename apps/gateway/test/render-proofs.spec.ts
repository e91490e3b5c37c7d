import { DomainError } from '@dcr/domain';
import { base64url, SignJWT } from 'jose';
import { RENDER_PROOF_MAX_AGE_SECONDS, RenderProofFacts, renderProofKey, signRenderProof, verifyRenderProof } from '../src/sdk/render-proofs';

const key = new Uint8Array(Buffer.alloc(32, 7));
const otherKey = new Uint8Array(Buffer.alloc(32, 8));
const facts: RenderProofFacts = {
  application_id: 'tp_dev_0123456789abcdef',
  flow_id: 'flw_dev_0123456789abcdef',
  flow_version: 2,
  rendered: { newsletter: 'consent', fraud: 'objection', billing: 'notice' },
  notice_version: 'notice:flw_dev_0123456789abcdef:0011223344556677',
  locale: 'de',
  host_origin: 'https://shop.example',
};
const renderedAt = new Date('2025-03-02T08:14:02.000Z');
const later = (seconds: number) => new Date(renderedAt.getTime() + seconds * 1000);

async function refusal(run: () => Promise<unknown>): Promise<DomainError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('unauthenticated');
    return error as DomainError;
  }
  throw new Error('expected the render proof to be refused');
}

/** The proof with its payload replaced (the signature left as it was). */
function tampered(proof: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = proof.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  change(claims);
  return [header, base64url.encode(JSON.stringify(claims)), signature].join('.');
}

describe('render proofs', () => {
  it('round-trips every fact, with the render time and a single-use nonce', async () => {
    const { proof, nonce, renderedAt: at } = await signRenderProof(facts, key, renderedAt);
    expect(at).toBe('2025-03-02T08:14:02.000Z');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const verified = await verifyRenderProof(proof, key, later(60));
    expect(verified).toEqual({ ...facts, rendered_at: '2025-03-02T08:14:02.000Z', nonce });
    const header = JSON.parse(Buffer.from(proof.split('.')[0], 'base64url').toString('utf8'));
    expect(header).toEqual({ alg: 'HS256', typ: 'service-render-proof+jwt' });
    // Two renderings never share a nonce.
    expect((await signRenderProof(facts, key, renderedAt)).nonce).not.toBe(nonce);
  });

  it('refuses a forged or altered proof', async () => {
    const { proof } = await signRenderProof(facts, key, renderedAt);
    expect((await refusal(() => verifyRenderProof(proof, otherKey, later(1)))).message).toContain('signature does not verify');
    const widened = tampered(proof, (claims) => (claims.host_origin = 'https://evil.example'));
    expect((await refusal(() => verifyRenderProof(widened, key, later(1)))).message).toContain('signature does not verify');
    const [, payload] = proof.split('.');
    const unsigned = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'service-render-proof+jwt' }))}.${payload}.`;
    await refusal(() => verifyRenderProof(unsigned, key, later(1)));
    await refusal(() => verifyRenderProof('not a proof', key, later(1)));
  });

  it('refuses a stale proof, one from the future and another token type', async () => {
    const { proof } = await signRenderProof(facts, key, renderedAt);
    expect((await verifyRenderProof(proof, key, later(RENDER_PROOF_MAX_AGE_SECONDS - 1))).flow_id).toBe(facts.flow_id);
    expect((await refusal(() => verifyRenderProof(proof, key, later(RENDER_PROOF_MAX_AGE_SECONDS + 31)))).message).toContain('older than an hour');
    expect((await refusal(() => verifyRenderProof(proof, key, later(-120)))).message).toContain('iat');
    const jwt = await new SignJWT({ ...facts }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('1h').setJti('a'.repeat(22)).sign(key);
    expect((await refusal(() => verifyRenderProof(jwt, key))).message).toContain('typ');
  });

  it('refuses a correctly signed token that states no rendering', async () => {
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'service-render-proof+jwt' }).setIssuedAt().setExpirationTime('1h').setJti('b'.repeat(22)).sign(key);
    for (const broken of [
      { ...facts, rendered: {} },
      { ...facts, rendered: { newsletter: 'checkbox' } },
      { ...facts, flow_id: 'flow-1' },
      { ...facts, host_origin: 'https://shop.example/path' },
      { ...facts, flow_version: 0 },
    ]) {
      expect((await refusal(async () => verifyRenderProof(await sign(broken), key))).message).toContain('does not state a rendering');
    }
  });

  it('takes FIELD_RENDER_PROOF_KEY, else a per-country key derived from SUBJECT_REF_KEY', () => {
    const configured = Buffer.alloc(32, 9).toString('base64');
    expect(Buffer.from(renderProofKey({ FIELD_RENDER_PROOF_KEY: configured, SUBJECT_REF_KEY: 'k'.repeat(32), COUNTRY: 'US' })).toString('base64')).toBe(configured);
    const us = renderProofKey({ SUBJECT_REF_KEY: 'k'.repeat(32), COUNTRY: 'US' });
    expect(us).toHaveLength(32);
    expect(renderProofKey({ SUBJECT_REF_KEY: 'k'.repeat(32), COUNTRY: 'US' })).toEqual(us);
    expect(renderProofKey({ SUBJECT_REF_KEY: 'k'.repeat(32), COUNTRY: 'DE' })).not.toEqual(us);
  });
});
