import fc from 'fast-check';
import { ed25519FromSeed } from './ed25519';
import { computeKeyId, SIG_TYPE_ED25519 } from './encoding';
import { NoteError } from './errors';
import { generateNoteKey, noteSignerFromKey, noteSignerFromSeed, parseVerifierKey } from './keys';

// golang.org/x/mod/sumdb/note (package doc and note_test.go).
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
// transparency-dev/formats note/note_cosigv1_test.go: a 0x01 key and a real 0x04 witness key.
const TEST_ED25519_VKEY = 'TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6';
const REMORA_COSIGNATURE_VKEY = 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2';

function expectMalformed(fn: () => unknown): void {
  expect(fn).toThrow(NoteError);
  try {
    fn();
  } catch (e) {
    expect((e as NoteError).code).toBe('malformed');
  }
}

describe('key IDs against published keys', () => {
  it('computes the key ID of the Go PeterNeumann key', () => {
    const pub = Buffer.from(PETER_VKEY.split('+').slice(2).join('+'), 'base64').subarray(1);
    expect(computeKeyId('PeterNeumann', SIG_TYPE_ED25519, pub).toString('hex')).toBe('c74f20a3');
    expect(parseVerifierKey(PETER_VKEY)).toMatchObject({ name: 'PeterNeumann', type: 'ed25519' });
  });

  it('derives the published verifier key from the published signer key', () => {
    const signer = noteSignerFromKey(PETER_SKEY);
    expect(signer.name).toBe('PeterNeumann');
    expect(signer.keyId.toString('hex')).toBe('c74f20a3');
    expect(signer.verifierKey).toBe(PETER_VKEY);
  });

  it('accepts other published keys of type 0x01 and 0x04 (key ID checked on parse)', () => {
    expect(parseVerifierKey(TEST_ED25519_VKEY)).toMatchObject({ name: 'TEST', type: 'ed25519' });
    const remora = parseVerifierKey(REMORA_COSIGNATURE_VKEY);
    expect(remora).toMatchObject({ name: 'remora.n621.de', type: 'cosignature/v1' });
    expect(remora.keyId.toString('hex')).toBe('da77ade7');
  });
});

describe('parseVerifierKey', () => {
  // The Go test: no proper substring and no single-byte mangling of the key may parse.
  it('refuses every proper substring and every single-character change', () => {
    for (let i = 0; i <= PETER_VKEY.length; i++) {
      for (let j = i + 1; j <= PETER_VKEY.length; j++) {
        if (i !== 0 || j !== PETER_VKEY.length) expectMalformed(() => parseVerifierKey(PETER_VKEY.slice(i, j)));
      }
    }
    for (let i = 0; i < PETER_VKEY.length; i++) {
      const mangled = PETER_VKEY.slice(0, i) + String.fromCharCode(PETER_VKEY.charCodeAt(i) + 1) + PETER_VKEY.slice(i + 1);
      expectMalformed(() => parseVerifierKey(mangled));
    }
  });

  it.each([
    ['wrong key length, adjusted key id', 'PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=='],
    ['unknown type, adjusted key id', 'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['wrong number of parts', 'bananas.sigstore.dev+12344556'],
    ['invalid base64', 'rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!'],
    ['key id not hex', 'PeterNeumann+NOT_A_NUMBER+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['incorrect key id', 'PeterNeumann+00000000+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['name with a space', 'Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['empty name', '+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'],
    ['unpadded base64', 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'.slice(0, -1)],
  ])('refuses %s', (_name, key) => expectMalformed(() => parseVerifierKey(key)));
});

describe('signers', () => {
  it('generateNoteKey round trips through both key texts', () => {
    const { signerKey, verifierKey } = generateNoteKey('example.com/log');
    expect(signerKey).toMatch(/^PRIVATE\+KEY\+example\.com\/log\+[0-9a-f]{8}\+/);
    const signer = noteSignerFromKey(signerKey);
    const verifier = parseVerifierKey(verifierKey);
    expect(signer.verifierKey).toBe(verifierKey);
    expect(signer.keyId.equals(verifier.keyId)).toBe(true);
    const msg = Buffer.from('hi\n');
    const sig = signer.sign(msg);
    expect(verifier.verify(msg, sig)).toBe(true);
    expect(verifier.verify(Buffer.from('hj\n'), sig)).toBe(false);
    sig[0] ^= 1;
    expect(verifier.verify(msg, sig)).toBe(false);
  });

  it('refuses every proper substring and every single-character change of a signer key', () => {
    for (let i = 0; i <= PETER_SKEY.length; i++) {
      for (let j = i + 1; j <= PETER_SKEY.length; j++) {
        if (i !== 0 || j !== PETER_SKEY.length) expectMalformed(() => noteSignerFromKey(PETER_SKEY.slice(i, j)));
      }
    }
    for (let i = 0; i < PETER_SKEY.length; i++) {
      const mangled = PETER_SKEY.slice(0, i) + String.fromCharCode(PETER_SKEY.charCodeAt(i) + 1) + PETER_SKEY.slice(i + 1);
      expectMalformed(() => noteSignerFromKey(mangled));
    }
  });

  it.each([
    ['empty', ''],
    ['with a space', 'a b'],
    ['with a plus', 'a+b'],
    ['with a no-break space', 'a\u00a0b'],
    ['with a control character', 'a\u0001b'],
    ['with a lone surrogate', 'a\ud800b'],
  ])('refuses a name %s', (_what, name) => expectMalformed(() => noteSignerFromSeed(name, Buffer.alloc(32))));

  it('refuses a seed that is not 32 bytes', () => {
    expectMalformed(() => noteSignerFromSeed('a', Buffer.alloc(31)));
  });

  it('refuses a cosignature (0x04) key as a note signer key', () => {
    // Peter's seed relabelled as type 0x04, with the key ID that type gives.
    const seed = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
    const keyId = computeKeyId('PeterNeumann', 0x04, ed25519FromSeed(seed).publicKey).toString('hex');
    const body = Buffer.concat([Buffer.from([4]), seed]).toString('base64');
    expect(() => noteSignerFromKey(`PRIVATE+KEY+PeterNeumann+${keyId}+${body}`)).toThrow(/unsupported type 0x04/);
  });

  it('any valid name and seed give a verifier key that parses back to the same key', () => {
    const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !/[\p{White_Space}+\u0000-\u001f]/u.test(s));
    fc.assert(
      fc.property(name, fc.uint8Array({ minLength: 32, maxLength: 32 }), (n, seed) => {
        const signer = noteSignerFromSeed(n, seed);
        const verifier = parseVerifierKey(signer.verifierKey);
        expect(verifier.name).toBe(n);
        expect(verifier.keyId.equals(signer.keyId)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});
