import fc from 'fast-check';
import { FlattenedSign, base64url, generateKeyPair } from 'jose';
import { canonicalReceipt } from '../flavors/canonical';
import { generateReceiptSigningKey, signReceipt, type ReceiptSigningAlgorithm, type ReceiptSigningKey, type SignedReceipt } from '../flavors/signed';
import fixture from '../flavors/__fixtures__/consent-receipt.json';
import { receiptJwks, receiptKeyHistoryEntry, type ReceiptKeyHistory } from './published-keys';
import { verifySignedReceipt } from './verify-signed-receipt';

type Json = Record<string, unknown>;
const receipt = () => JSON.parse(JSON.stringify(fixture)) as Json;
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const ALGORITHMS: ReceiptSigningAlgorithm[] = ['ES256', 'EdDSA'];

const encodeHeader = (header: Json) => base64url.encode(JSON.stringify(header));
const headerOf = (signed: SignedReceipt) => JSON.parse(Buffer.from(signed.signature.split('.')[0], 'base64url').toString('utf8')) as Json;

/** Signs the JCS bytes of `payload` under an arbitrary protected header, as an attacker could. */
async function signWithHeader(payload: Json, header: Json, key: Parameters<FlattenedSign['sign']>[0]): Promise<SignedReceipt> {
  const jws = await new FlattenedSign(new TextEncoder().encode(canonicalReceipt(payload))).setProtectedHeader(header).sign(key);
  return { payload, signature: `${jws.protected}..${jws.signature}` };
}

let es256: ReceiptSigningKey;
let eddsa: ReceiptSigningKey;
let fetchSpy: jest.SpyInstance;

beforeAll(async () => {
  es256 = await generateReceiptSigningKey('ES256');
  eddsa = await generateReceiptSigningKey('EdDSA');
});
beforeEach(() => {
  fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('the verifier must not fetch'));
});
afterEach(() => {
  expect(fetchSpy).not.toHaveBeenCalled();
  fetchSpy.mockRestore();
});

describe.each(ALGORITHMS)('verifySignedReceipt round trip (%s)', (alg) => {
  const key = () => (alg === 'ES256' ? es256 : eddsa);

  it('accepts a receipt it signed, naming the kid and alg', async () => {
    const signed = await signReceipt(receipt(), key());
    await expect(verifySignedReceipt(signed, { jwks: receiptJwks([es256, eddsa]) })).resolves.toEqual({ valid: true, kid: key().kid, alg });
  });

  it('accepts the signed receipt after a JSON round trip with other key order and whitespace', async () => {
    const signed = await signReceipt(receipt(), key());
    const reordered = JSON.parse(JSON.stringify({ signature: signed.signature, payload: reverseKeys(signed.payload) }, null, 2)) as unknown;
    await expect(verifySignedReceipt(reordered, { jwks: receiptJwks([key()]) })).resolves.toMatchObject({ valid: true });
  });

  it('refuses any change to the payload', async () => {
    const signed = await signReceipt(receipt(), key());
    const jwks = receiptJwks([key()]);
    const leaves = leafPaths(signed.payload);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...leaves), fc.oneof(fc.string(), fc.integer(), fc.boolean()), async (path, replacement) => {
        const tampered = copy(signed);
        const changed = setAt(tampered.payload, path, replacement);
        fc.pre(changed);
        await expect(verifySignedReceipt(tampered, { jwks })).resolves.toMatchObject({ valid: false, code: 'bad_signature' });
      }),
      { numRuns: 40 },
    );
  });

  it('refuses an added or removed member of the payload', async () => {
    const signed = await signReceipt(receipt(), key());
    const jwks = receiptJwks([key()]);
    const added = copy(signed);
    (added.payload.extensions as Json).sensitive_extra = true;
    await expect(verifySignedReceipt(added, { jwks })).resolves.toMatchObject({ code: 'bad_signature' });
    const removed = copy(signed);
    (removed.payload.event as unknown[]).pop();
    await expect(verifySignedReceipt(removed, { jwks })).resolves.toMatchObject({ code: 'bad_signature' });
  });

  it('refuses a changed protected header or signature value', async () => {
    const signed = await signReceipt(receipt(), key());
    const jwks = receiptJwks([key()]);
    const [, , signature] = signed.signature.split('.');
    const laterIat = { ...signed, signature: `${encodeHeader({ ...headerOf(signed), iat: (headerOf(signed).iat as number) + 60 })}..${signature}` };
    await expect(verifySignedReceipt(laterIat, { jwks })).resolves.toMatchObject({ valid: false, code: 'bad_signature' });

    const bytes = Buffer.from(signature, 'base64url');
    bytes[bytes.length - 1] ^= 0x01;
    const flipped = { ...signed, signature: `${signed.signature.split('.')[0]}..${bytes.toString('base64url')}` };
    await expect(verifySignedReceipt(flipped, { jwks })).resolves.toMatchObject({ valid: false, code: 'bad_signature' });
  });
});

describe('verifySignedReceipt key selection', () => {
  it('refuses a kid that is in no key document', async () => {
    const signed = await signReceipt(receipt(), es256);
    const result = await verifySignedReceipt(signed, { jwks: receiptJwks([eddsa]) });
    expect(result).toEqual({ valid: false, code: 'unknown_key', reason: `no key with kid ${es256.kid} in the supplied JWKS or key history` });
  });

  it('refuses a header whose kid was switched to another published key', async () => {
    const other = await generateReceiptSigningKey('ES256');
    const signed = await signReceipt(receipt(), es256);
    const [, , signature] = signed.signature.split('.');
    const switched = { ...signed, signature: `${encodeHeader({ ...headerOf(signed), kid: other.kid })}..${signature}` };
    await expect(verifySignedReceipt(switched, { jwks: receiptJwks([es256, other]) })).resolves.toMatchObject({ code: 'bad_signature' });
  });

  it('needs some keys', async () => {
    const signed = await signReceipt(receipt(), es256);
    await expect(verifySignedReceipt(signed, {})).resolves.toMatchObject({ code: 'unknown_key', reason: expect.stringMatching(/no keys were supplied/) });
  });

  it('reports key documents of the wrong shape', async () => {
    const signed = await signReceipt(receipt(), es256);
    await expect(verifySignedReceipt(signed, { jwks: [es256.publicJwk] as never })).resolves.toMatchObject({ code: 'malformed', reason: 'the JWKS is not {"keys": [...]}' });
    await expect(verifySignedReceipt(signed, { witnessConfiguration: { keys: [] } })).resolves.toMatchObject({ code: 'malformed', reason: 'the witness configuration has no receipt_keys array' });
  });

  it('uses only the public members of a published key', async () => {
    const signed = await signReceipt(receipt(), eddsa);
    const leaky = { keys: [{ ...eddsa.privateJwk!, key_ops: ['sign'] }] } as never;
    await expect(verifySignedReceipt(signed, { jwks: leaky })).resolves.toMatchObject({ valid: true, kid: eddsa.kid });
  });

  it('refuses a key published for encryption', async () => {
    const signed = await signReceipt(receipt(), es256);
    const jwks = { keys: [{ ...es256.publicJwk, use: 'enc' }] } as never;
    await expect(verifySignedReceipt(signed, { jwks })).resolves.toMatchObject({ code: 'unknown_key', reason: expect.stringMatching(/use "enc"/) });
  });
});

describe('verifySignedReceipt algorithm confusion', () => {
  it('refuses alg none', async () => {
    const payload = receipt();
    const unsigned = { payload, signature: `${encodeHeader({ alg: 'none', kid: es256.kid })}..` };
    await expect(verifySignedReceipt(unsigned, { jwks: receiptJwks([es256]) })).resolves.toMatchObject({ valid: false, code: 'unsupported_alg' });
  });

  it('refuses HS256 keyed with the published public key', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(es256.publicJwk));
    const forged = await signWithHeader(receipt(), { alg: 'HS256', kid: es256.kid, typ: 'receipt+jws' }, secret);
    const result = await verifySignedReceipt(forged, { jwks: receiptJwks([es256]) });
    expect(result).toMatchObject({ valid: false, code: 'unsupported_alg', reason: 'alg "HS256" is refused: receipts are signed with ES256 or EdDSA' });
  });

  it('refuses RS256 and ES384', async () => {
    for (const alg of ['RS256', 'ES384'] as const) {
      const { privateKey } = await generateKeyPair(alg);
      const forged = await signWithHeader(receipt(), { alg, kid: es256.kid }, privateKey);
      await expect(verifySignedReceipt(forged, { jwks: receiptJwks([es256]) })).resolves.toMatchObject({ code: 'unsupported_alg' });
    }
  });

  it('refuses a header alg that does not match the key it names', async () => {
    const forged = await signWithHeader(receipt(), { alg: 'EdDSA', kid: es256.kid, typ: 'receipt+jws', iat: Math.floor(Date.now() / 1000) }, eddsa.privateKey);
    const result = await verifySignedReceipt(forged, { jwks: receiptJwks([es256, eddsa]) });
    expect(result).toEqual({
      valid: false,
      code: 'unsupported_alg',
      reason: `the header says EdDSA, but key ${es256.kid} in the jwks is an ES256 key`,
    });
  });

  it('refuses a key whose JWK names another alg', async () => {
    const signed = await signReceipt(receipt(), es256);
    const jwks = { keys: [{ ...es256.publicJwk, alg: 'ES384' }] } as never;
    await expect(verifySignedReceipt(signed, { jwks })).resolves.toMatchObject({ code: 'unsupported_alg' });
  });
});

describe('verifySignedReceipt refuses malformed input', () => {
  let signed: SignedReceipt;
  let header: string;
  let signature: string;
  const jwks = () => receiptJwks([es256]);
  beforeAll(async () => {
    signed = await signReceipt(receipt(), es256);
    [header, , signature] = signed.signature.split('.');
  });

  it.each([
    ['not an object', () => 'signed', 'a signed receipt is a JSON object {"payload": ..., "signature": ...}'],
    ['an array', () => [signed], 'a signed receipt is a JSON object {"payload": ..., "signature": ...}'],
    ['no payload', () => ({ signature: signed.signature }), 'the payload is missing'],
    ['a string payload', () => ({ payload: canonicalReceipt(signed.payload), signature: signed.signature }), 'the payload is not a receipt object'],
    ['no signature', () => ({ payload: signed.payload }), 'the signature is missing'],
    ['a JWS object as signature', () => ({ payload: signed.payload, signature: { protected: header, signature } }), 'the signature is not a string'],
    ['an attached payload', () => ({ payload: signed.payload, signature: `${header}.${base64url.encode(canonicalReceipt(signed.payload))}.${signature}` }), 'the signature carries its own payload; a receipt signature is detached ("<protected>..<signature>")'],
    ['two parts', () => ({ payload: signed.payload, signature: `${header}.${signature}` }), 'the signature is not a detached compact JWS "<protected>..<signature>"'],
    ['an empty header', () => ({ payload: signed.payload, signature: `..${signature}` }), 'the protected header is missing or not base64url'],
    ['an empty signature value', () => ({ payload: signed.payload, signature: `${header}..` }), 'the signature value is missing or not base64url'],
    ['a header that is not JSON', () => ({ payload: signed.payload, signature: `${base64url.encode('{"alg":')}..${signature}` }), 'the protected header is not a base64url-encoded JSON object'],
    ['a header without alg', () => ({ payload: signed.payload, signature: `${encodeHeader({ kid: es256.kid })}..${signature}` }), 'the protected header has no alg'],
    ['a header without kid', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256' })}..${signature}` }), 'the protected header has no kid'],
    ['another typ', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, typ: 'JWT' })}..${signature}` }), 'the protected header\'s typ "JWT" is not receipt+jws'],
    ['b64 false', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, typ: 'receipt+jws', b64: false, crit: ['b64'] })}..${signature}` }), 'the protected header uses crit/b64 extensions, which receipt signatures never do'],
    ['no typ', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, iat: 1_700_000_000 })}..${signature}` }), 'the protected header has no typ (receipt+jws)'],
    ['no iat', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, typ: 'receipt+jws' })}..${signature}` }), 'the protected header has no iat (when the receipt was signed)'],
    ['a string iat', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, typ: 'receipt+jws', iat: 'yesterday' })}..${signature}` }), "the protected header's iat is not a NumericDate"],
    ['an iat ten years ahead', () => ({ payload: signed.payload, signature: `${encodeHeader({ alg: 'ES256', kid: es256.kid, typ: 'receipt+jws', iat: 2_100_000_000 })}..${signature}` }), "the protected header's iat (2036-07-18T13:20:00.000Z) lies in the future: no receipt is signed ahead of time"],
  ])('%s', async (_case, input, reason) => {
    await expect(verifySignedReceipt(input(), { jwks: jwks() })).resolves.toEqual({ valid: false, code: 'malformed', reason });
  });
});

describe('verifySignedReceipt with the key history of the witness configuration', () => {
  const rotatedAt = '2025-06-01T00:00:00.000Z';
  let oldKey: ReceiptSigningKey;
  let newKey: ReceiptSigningKey;
  let history: ReceiptKeyHistory & { country: string };
  beforeAll(async () => {
    oldKey = await generateReceiptSigningKey('ES256');
    newKey = await generateReceiptSigningKey('EdDSA');
    history = {
      country: 'DE',
      receipt_keys: [receiptKeyHistoryEntry(oldKey, '2025-01-01T00:00:00Z', rotatedAt), receiptKeyHistoryEntry(newKey, rotatedAt)],
    };
  });

  it('still accepts a receipt signed before the rotation, when jwks.json lists only the new key', async () => {
    const signed = await signReceipt(receipt(), oldKey, { signedAt: new Date('2025-04-12T16:20:05Z') });
    const jwks = receiptJwks([newKey]);
    await expect(verifySignedReceipt(signed, { jwks })).resolves.toMatchObject({ valid: false, code: 'unknown_key' });
    await expect(verifySignedReceipt(signed, { jwks, witnessConfiguration: history })).resolves.toEqual({ valid: true, kid: oldKey.kid, alg: 'ES256' });
    await expect(verifySignedReceipt(signed, { witnessConfiguration: copy(history) })).resolves.toMatchObject({ valid: true });
  });

  it('accepts receipts of the new key, from either document', async () => {
    const signed = await signReceipt(receipt(), newKey, { signedAt: new Date('2025-07-01T00:00:00Z') });
    await expect(verifySignedReceipt(signed, { jwks: receiptJwks([newKey]), witnessConfiguration: history })).resolves.toEqual({ valid: true, kid: newKey.kid, alg: 'EdDSA' });
  });

  it('refuses a receipt the retired key signed after its rotation', async () => {
    const signed = await signReceipt(receipt(), oldKey, { signedAt: new Date('2025-06-02T00:00:00Z') });
    const result = await verifySignedReceipt(signed, { jwks: receiptJwks([oldKey]), witnessConfiguration: history });
    expect(result).toEqual({
      valid: false,
      code: 'key_not_valid_at_signing',
      reason: `key ${oldKey.kid} signed receipts 2025-01-01T00:00:00.000Z .. ${rotatedAt}; this receipt was signed at 2025-06-02T00:00:00.000Z`,
    });
  });

  it('refuses a receipt signed before the key existed', async () => {
    const signed = await signReceipt(receipt(), newKey, { signedAt: new Date('2025-05-31T23:59:58Z') });
    await expect(verifySignedReceipt(signed, { witnessConfiguration: history })).resolves.toMatchObject({ code: 'key_not_valid_at_signing' });
  });

  it('refuses a back-dated receipt from the retired key that records events after the rotation', async () => {
    const later = receipt();
    (later.event as Json[]).push({ event_time: '2025-07-01T00:00:00Z', entity_id: 'dcr_platform', event_type: 'regular', event_state: 'consent expired' });
    const signed = await signReceipt(later, oldKey, { signedAt: new Date('2025-05-01T00:00:00Z') });
    const result = await verifySignedReceipt(signed, { witnessConfiguration: history });
    expect(result).toMatchObject({ code: 'key_not_valid_at_signing', reason: expect.stringMatching(/records an event at 2025-07-01T00:00:00.000Z/) });
  });

  it('refuses a history row that cannot be used', async () => {
    const signed = await signReceipt(receipt(), oldKey, { signedAt: new Date('2025-04-12T16:20:05Z') });
    const broken = copy(history);
    broken.receipt_keys[0].valid_from = 'soon';
    await expect(verifySignedReceipt(signed, { witnessConfiguration: broken })).resolves.toEqual({
      valid: false,
      code: 'malformed',
      reason: `the key history row for kid ${oldKey.kid} has no valid_from instant`,
    });
  });
});

describe('published key documents', () => {
  it('build history rows: current without an end, retired with one, never private members', () => {
    const current = receiptKeyHistoryEntry(eddsa, new Date('2025-06-01T00:00:00Z'));
    expect(current).toEqual({
      kid: eddsa.kid,
      alg: 'EdDSA',
      jwk: { kty: 'OKP', crv: 'Ed25519', x: eddsa.publicJwk.x, kid: eddsa.kid, alg: 'EdDSA', use: 'sig' },
      status: 'current',
      valid_from: '2025-06-01T00:00:00.000Z',
      valid_until: null,
    });
    const retired = receiptKeyHistoryEntry({ ...es256, publicJwk: es256.privateJwk as never }, '2025-01-01T00:00:00+01:00', '2025-06-01T00:00:00Z');
    expect(retired).toMatchObject({ status: 'retired', valid_from: '2024-12-31T23:00:00.000Z', valid_until: '2025-06-01T00:00:00.000Z' });
    expect(retired.jwk).not.toHaveProperty('d');
    expect(Object.keys(retired.jwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });

  it('refuse windows that end before they start or are not instants', () => {
    expect(() => receiptKeyHistoryEntry(es256, '2025-06-01T00:00:00Z', '2025-01-01T00:00:00Z')).toThrow(RangeError);
    expect(() => receiptKeyHistoryEntry(es256, 'yesterday')).toThrow(RangeError);
  });

  it('build jwks.json from public members only', () => {
    const jwks = receiptJwks([{ ...es256, publicJwk: es256.privateJwk as never }, eddsa]);
    expect(jwks.keys.map((key) => key.kid)).toEqual([es256.kid, eddsa.kid]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
  });
});

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reverseKeys(member)]));
}

function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leafPaths(item, [...path, index]));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, member]) => leafPaths(member, [...path, key]));
  return [path];
}

/** Sets the leaf at `path`; false when the new value equals the old one. */
function setAt(root: Json, path: (string | number)[], replacement: unknown): boolean {
  let parent: Record<string | number, unknown> = root;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (parent[last] === replacement) return false;
  parent[last] = replacement;
  return true;
}
