import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK } from 'jose';
import { canonicalReceipt } from './canonical';
import {
  RECEIPT_JWS_TYPE,
  ReceiptKeyError,
  generateReceiptSigningKey,
  receiptSigningKeyFromJwk,
  signReceipt,
  type ReceiptSigningAlgorithm,
} from './signed';
import fixture from './__fixtures__/consent-receipt.json';

const receipt = () => JSON.parse(JSON.stringify(fixture)) as Record<string, unknown>;
const ALGORITHMS: ReceiptSigningAlgorithm[] = ['ES256', 'EdDSA'];

async function keyError(promise: Promise<unknown>): Promise<ReceiptKeyError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ReceiptKeyError);
  return error as ReceiptKeyError;
}

describe.each(ALGORITHMS)('receipt signing keys (%s)', (alg) => {
  it('are generated with the RFC 7638 thumbprint as kid and a public JWK for publication', async () => {
    const key = await generateReceiptSigningKey(alg);
    expect(key.alg).toBe(alg);
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key.publicJwk).toMatchObject({ kid: key.kid, alg, use: 'sig', kty: alg === 'ES256' ? 'EC' : 'OKP', crv: alg === 'ES256' ? 'P-256' : 'Ed25519' });
    expect(key.publicJwk).not.toHaveProperty('d');
    const { kty, crv, x, y } = key.publicJwk;
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty, crv, x, ...(y ? { y } : {}) }, 'sha256'));
    expect(key.privateJwk).toMatchObject({ kid: key.kid, alg, use: 'sig', d: expect.any(String) });
  });

  it('load back from the stored private JWK with the same kid', async () => {
    const generated = await generateReceiptSigningKey(alg);
    const loaded = await receiptSigningKeyFromJwk(generated.privateJwk!);
    expect(loaded.kid).toBe(generated.kid);
    expect(loaded.publicJwk).toEqual(generated.publicJwk);
    const signed = await signReceipt(receipt(), loaded);
    const [header, , signature] = signed.signature.split('.');
    const publicKey = await importJWK(generated.publicJwk, alg);
    await expect(compactVerify(`${header}.${Buffer.from(canonicalReceipt(signed.payload)).toString('base64url')}.${signature}`, publicKey)).resolves.toBeDefined();
  });

  it('refuse a private JWK whose halves do not belong together', async () => {
    const one = await generateReceiptSigningKey(alg);
    const other = await generateReceiptSigningKey(alg);
    const mixed = { ...one.privateJwk!, d: other.privateJwk!.d, kid: undefined };
    expect((await keyError(receiptSigningKeyFromJwk(mixed))).code).toBe('invalid_key');
  });

  it('refuse a public JWK, a kid that is not the thumbprint and a conflicting alg', async () => {
    const key = await generateReceiptSigningKey(alg);
    expect((await keyError(receiptSigningKeyFromJwk(key.publicJwk))).message).toMatch(/complete private JWK/);
    expect((await keyError(receiptSigningKeyFromJwk({ ...key.privateJwk!, kid: 'receipts-2025' }))).message).toMatch(/not its RFC 7638 thumbprint/);
    const otherAlg = alg === 'ES256' ? 'ES384' : 'Ed25519';
    expect((await keyError(receiptSigningKeyFromJwk({ ...key.privateJwk!, alg: otherAlg }))).code).toBe('invalid_key');
    expect((await keyError(receiptSigningKeyFromJwk({ ...key.privateJwk!, use: 'enc' }))).code).toBe('invalid_key');
  });
});

describe('receipt signing keys of other types', () => {
  it('are refused as unsupported', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    expect((await keyError(receiptSigningKeyFromJwk(await exportJWK(privateKey)))).code).toBe('unsupported_alg');
    const p384 = await generateKeyPair('ES384', { extractable: true });
    expect((await keyError(receiptSigningKeyFromJwk(await exportJWK(p384.privateKey)))).code).toBe('unsupported_alg');
    expect((await keyError(receiptSigningKeyFromJwk({ kty: 'oct', k: 'c2VjcmV0' }))).code).toBe('unsupported_alg');
    expect((await keyError(generateReceiptSigningKey('HS256' as ReceiptSigningAlgorithm))).code).toBe('unsupported_alg');
  });
});

describe.each(ALGORITHMS)('signReceipt (%s)', (alg) => {
  it('produces a detached JWS: "<protected>..<signature>" over the JCS bytes of the payload', async () => {
    const key = await generateReceiptSigningKey(alg);
    const signed = await signReceipt(receipt(), key, { signedAt: new Date('2025-04-12T16:20:05.900Z') });
    expect(Object.keys(signed).sort()).toEqual(['payload', 'signature']);
    expect(signed.signature).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    expect(signed.signature.split('.')).toHaveLength(3);
    expect(decodeProtectedHeader(signed.signature)).toEqual({ alg, kid: key.kid, typ: RECEIPT_JWS_TYPE, iat: 1744474805 });

    // RFC 7515 appendix F: re-attaching BASE64URL(JCS(payload)) gives an ordinary compact JWS.
    const [header, , signature] = signed.signature.split('.');
    const attached = `${header}.${Buffer.from(canonicalReceipt(receipt()), 'utf8').toString('base64url')}.${signature}`;
    const { payload, protectedHeader } = await compactVerify(attached, await importJWK(key.publicJwk, alg), { algorithms: [alg] });
    expect(Buffer.from(payload).toString('utf8')).toBe(canonicalReceipt(receipt()));
    expect(protectedHeader.b64).toBeUndefined();
  });

  it('returns the canonical receipt as payload, detached from the caller’s object', async () => {
    const key = await generateReceiptSigningKey(alg);
    const original = receipt();
    const signed = await signReceipt(original, key);
    expect(signed.payload).toEqual(fixture);
    expect(JSON.stringify(signed.payload)).toBe(canonicalReceipt(original));
    (original.record as Record<string, unknown>).record_id = 'changed';
    expect((signed.payload.record as Record<string, unknown>).record_id).toBe('rec_01J9Z8K7Q2M4N6P8R0S2T4V6X8');
  });

  it('refuses what is not a JSON receipt object', async () => {
    const key = await generateReceiptSigningKey(alg);
    await expect(signReceipt([] as unknown as Record<string, unknown>, key)).rejects.toThrow(TypeError);
    await expect(signReceipt({ at: new Date() }, key)).rejects.toThrow(TypeError);
  });
});
