import fc from 'fast-check';
import { formatCheckpoint } from './checkpoint';
import {
  cosignatureMessage,
  cosignatureTimestamp,
  cosignerFromKey,
  cosignerFromSeed,
  generateCosignerKey,
  verifyCosignature,
} from './cosignature';
import { computeKeyId } from './encoding';
import { NoteError } from './errors';
import { generateNoteKey, noteSignerFromKey, noteSignerFromSeed, parseVerifierKey } from './keys';
import { openNote, parseNote, parseSignatureLine, signNote } from './signed-note';

const BODY = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NoteError);
    return (e as NoteError).code;
  }
  return 'no error';
}

describe('published examples', () => {
  it('reads the timestamp of the c2sp.org/tlog-cosignature example (its message shows time 1679315147)', () => {
    const sig = parseSignatureLine(
      '\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==',
    );
    expect(sig.signature).toHaveLength(72);
    expect(cosignatureTimestamp(sig)).toBe(1679315147);
  });

  it('reads the timestamp of the transparency-dev/formats test signature (1727964367)', () => {
    const b64 = 'ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==';
    expect(cosignatureTimestamp(parseSignatureLine(`\u2014 w ${b64}`))).toBe(1727964367);
    // That file's "wrong type of signature" case is a plain Ed25519 note signature.
    const plain = 'eQjRQm6eSKzFoiYalgwCPXu2y3ijtg68is9M46JKxuZB+dRfTmeQeDBoXnvxZx2ugnkyV+MUMLXpWs1hPb/W/4xkNQY=';
    expect(cosignatureTimestamp(parseSignatureLine(`\u2014 w ${plain}`))).toBeNull();
  });

  it('builds the signed message shown in the spec', () => {
    expect(cosignatureMessage(BODY, 1679315147).toString()).toBe(
      'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
  });
});

describe('cosigner keys', () => {
  it('generateCosignerKey gives 0x04 key texts that round trip', () => {
    const { signerKey, verifierKey } = generateCosignerKey('witness.example/w1');
    const cosigner = cosignerFromKey(signerKey);
    const verifier = parseVerifierKey(verifierKey);
    expect(cosigner.verifierKey).toBe(verifierKey);
    expect(verifier.type).toBe('cosignature/v1');
    expect(verifier.keyId.equals(cosigner.keyId)).toBe(true);
    expect(Buffer.from(verifierKey.split('+').slice(2).join('+'), 'base64')[0]).toBe(0x04);
    expect(Buffer.from(signerKey.split('+').slice(4).join('+'), 'base64')[0]).toBe(0x04);
  });

  it('uses key ID SHA-256(name || 0x0A || 0x04 || pubkey)[:4], distinct from the 0x01 ID of the same key', () => {
    const seed = Buffer.alloc(32, 9);
    const cosigner = cosignerFromSeed('w', seed);
    const pub = Buffer.from(cosigner.verifierKey.split('+').slice(2).join('+'), 'base64').subarray(1);
    expect(cosigner.keyId.equals(computeKeyId('w', 0x04, pub))).toBe(true);
    expect(cosigner.keyId.equals(computeKeyId('w', 0x01, pub))).toBe(false);
  });

  it('accepts a plain Ed25519 signer key, as transparency-dev/formats does, with the 0x04 key ID', () => {
    const { signerKey } = generateNoteKey('w');
    const fromNoteKey = cosignerFromKey(signerKey);
    expect(fromNoteKey.keyId.equals(noteSignerFromKey(signerKey).keyId)).toBe(false);
    expect(parseVerifierKey(fromNoteKey.verifierKey).type).toBe('cosignature/v1');
  });

  it('refuses a 0x04 signer key whose key ID does not match', () => {
    const { signerKey } = generateCosignerKey('w');
    const parts = signerKey.split('+');
    parts[3] = '00000000';
    expect(code(() => cosignerFromKey(parts.join('+')))).toBe('malformed');
  });
});

describe('cosign and verify', () => {
  const cosigner = cosignerFromSeed('witness.example/w1', Buffer.alloc(32, 1));
  const verifier = parseVerifierKey(cosigner.verifierKey);

  it('lays out keyID || timestamp || signature and verifies', () => {
    const sig = cosigner.cosign(BODY, 1679315147);
    const raw = Buffer.from(sig.line.split(' ')[2], 'base64');
    expect(raw).toHaveLength(4 + 8 + 64);
    expect(raw.subarray(0, 4).equals(cosigner.keyId)).toBe(true);
    expect(raw.readBigUInt64BE(4)).toBe(1679315147n);
    expect(verifyCosignature(verifier, BODY, sig)).toEqual({ timestamp: 1679315147 });
    expect(parseSignatureLine(sig.line)).toEqual(sig);
  });

  it('fails for another body, a changed timestamp, another key or a corrupted signature', () => {
    const sig = cosigner.cosign(BODY, 1000);
    expect(verifyCosignature(verifier, BODY.replace('20852163', '20852164'), sig)).toBeNull();
    const shifted = Buffer.from(sig.signature);
    shifted.writeBigUInt64BE(1001n);
    expect(verifyCosignature(verifier, BODY, { ...sig, signature: shifted })).toBeNull();
    const other = parseVerifierKey(cosignerFromSeed('witness.example/w1', Buffer.alloc(32, 2)).verifierKey);
    expect(verifyCosignature(other, BODY, sig)).toBeNull();
    const flipped = Buffer.from(sig.signature);
    flipped[20] ^= 1;
    expect(verifyCosignature(verifier, BODY, { ...sig, signature: flipped })).toBeNull();
  });

  it('covers extension lines', () => {
    const body = formatCheckpoint({ origin: 'o', size: 3, rootHash: Buffer.alloc(32), extensions: ['ext'] });
    const sig = cosigner.cosign(body, 5);
    expect(verifyCosignature(verifier, body, sig)).toEqual({ timestamp: 5 });
    expect(verifyCosignature(verifier, body.replace('ext', 'exu'), sig)).toBeNull();
  });

  it('is not a plain Ed25519 signature over the body', () => {
    const sig = cosigner.cosign(BODY, 7);
    // The same Ed25519 key, seen as a 0x01 note key.
    const asEd25519 = parseVerifierKey(noteSignerFromSeed('witness.example/w1', Buffer.alloc(32, 1)).verifierKey);
    expect(asEd25519.verify(Buffer.from(BODY), sig.signature.subarray(8))).toBe(false);
    expect(asEd25519.verify(Buffer.from(BODY), sig.signature)).toBe(false);
    expect(() => verifyCosignature(asEd25519, BODY, sig)).toThrow(/cosignature\/v1 verifier/);
  });

  it('refuses to cosign a non-checkpoint or with a bad timestamp', () => {
    expect(code(() => cosigner.cosign('hello\n', 1))).toBe('malformed');
    expect(code(() => cosigner.cosign(BODY, -1))).toBe('malformed');
    expect(code(() => cosigner.cosign(BODY, 1.5))).toBe('malformed');
  });

  it('rejects timestamps above 2^63-1 even when otherwise well-formed', () => {
    const sig = cosigner.cosign(BODY, 0);
    const big = Buffer.from(sig.signature);
    big.writeBigUInt64BE(1n << 63n);
    expect(verifier.verify(Buffer.from(BODY), big)).toBe(false);
  });

  it('lets openNote check a cosigned checkpoint; a log signature is then unverified', () => {
    const log = noteSignerFromKey(generateNoteKey('example.com/behind-the-sofa').signerKey);
    const note = signNote(BODY, [log]) + cosigner.cosign(BODY, 42).line + '\n';
    const opened = openNote(note, [verifier]);
    expect(opened.verified.map((s) => s.name)).toEqual(['witness.example/w1']);
    expect(opened.unverified.map((s) => s.name)).toEqual(['example.com/behind-the-sofa']);
    const both = openNote(note, [verifier, parseVerifierKey(log.verifierKey)]);
    expect(both.verified).toHaveLength(2);
    expect(parseNote(note).text).toBe(BODY);
  });

  it('round trips for any checkpoint and timestamp (property)', () => {
    const checkpoint = fc.record({
      origin: fc.stringMatching(/^[a-z./]{1,20}$/),
      size: fc.maxSafeNat(),
      rootHash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b)),
      extensions: fc.array(fc.stringMatching(/^[ -~]{1,10}$/), { maxLength: 2 }),
    });
    fc.assert(
      fc.property(checkpoint, fc.maxSafeNat(), (c, t) => {
        const body = formatCheckpoint(c);
        const sig = cosigner.cosign(body, t);
        expect(verifyCosignature(verifier, body, parseSignatureLine(sig.line))).toEqual({ timestamp: t });
      }),
      { numRuns: 50 },
    );
  });
});
