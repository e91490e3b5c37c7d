import fc from 'fast-check';
import { decodeNoteBytes } from './encoding';
import { NoteError } from './errors';
import { generateNoteKey, noteSignerFromKey, noteSignerFromSeed, parseVerifierKey, type NoteVerifier } from './keys';
import { makeNoteSignature, openNote, parseNote, signNote } from './signed-note';

// golang.org/x/mod/sumdb/note: package doc and note_test.go (TestSign, TestOpen).
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG =
  '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const ENOCH_SIG =
  '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

const peter = parseVerifierKey(PETER_VKEY);
const enoch = parseVerifierKey(ENOCH_VKEY);

function errorOf(fn: () => unknown): NoteError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NoteError);
    return e as NoteError;
  }
  throw new Error('expected a NoteError');
}

/** Inserts "ABCD" into the base64 of a signature line, as the Go tests do. */
function corrupt(sigLine: string): string {
  return sigLine.slice(0, 60) + 'ABCD' + sigLine.slice(60);
}

describe('published Go example', () => {
  it('signNote reproduces the published note byte for byte (Ed25519 is deterministic)', () => {
    expect(signNote(TEXT, [noteSignerFromKey(PETER_SKEY)])).toBe(`${TEXT}\n${PETER_SIG}`);
  });

  it('openNote verifies the published signature with the published verifier key', () => {
    const opened = openNote(`${TEXT}\n${PETER_SIG}`, [peter]);
    expect(opened.text).toBe(TEXT);
    expect(opened.verified.map((s) => s.name)).toEqual(['PeterNeumann']);
    expect(opened.verified[0].keyId.toString('hex')).toBe('c74f20a3');
    expect(opened.verified[0].line + '\n').toBe(PETER_SIG);
    expect(opened.unverified).toEqual([]);
  });

  it('verifies the doubly signed published note', () => {
    const opened = openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter, enoch]);
    expect(opened.verified.map((s) => s.name)).toEqual(['PeterNeumann', 'EnochRoot']);
    expect(opened.unverified).toEqual([]);
  });

  it('returns a signature from an unknown key as unverified', () => {
    const opened = openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter]);
    expect(opened.verified.map((s) => s.name)).toEqual(['PeterNeumann']);
    expect(opened.unverified.map((s) => s.name)).toEqual(['EnochRoot']);
    expect(opened.unverified[0].keyId.toString('hex')).toBe('af0cfe78');
  });

  it('refuses a note with no verified signature, keeping what it parsed on the error', () => {
    const err = errorOf(() => openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, []));
    expect(err.code).toBe('unverified');
    expect(err.note?.text).toBe(TEXT);
    expect(err.note?.unverified.map((s) => s.name)).toEqual(['PeterNeumann', 'EnochRoot']);
  });

  it('treats a key sharing only the name, or only the key ID, as unknown', () => {
    const sameName = noteSignerFromSeed('PeterNeumann', Buffer.alloc(32, 1));
    const otherName: NoteVerifier = { ...peter, name: 'PeterNeuman' };
    const err = errorOf(() => openNote(`${TEXT}\n${PETER_SIG}`, [parseVerifierKey(sameName.verifierKey), otherName]));
    expect(err.code).toBe('unverified');
  });

  it('fails when the text was modified after signing', () => {
    const modified = TEXT.replace('answer', 'Answer');
    expect(errorOf(() => openNote(`${modified}\n${PETER_SIG}`, [peter])).code).toBe('invalid_signature');
  });

  it('fails on a corrupted signature from a known key', () => {
    expect(errorOf(() => openNote(`${TEXT}\n${corrupt(PETER_SIG)}`, [peter])).code).toBe('invalid_signature');
  });

  it('handles duplicates as Go does: a known key counts once, identical unknown lines once', () => {
    const note = `${TEXT}\n${PETER_SIG}${PETER_SIG}${ENOCH_SIG}${ENOCH_SIG}${corrupt(ENOCH_SIG)}`;
    const opened = openNote(note, [peter]);
    expect(opened.verified).toHaveLength(1);
    expect(opened.unverified.map((s) => s.line + '\n')).toEqual([ENOCH_SIG, corrupt(ENOCH_SIG)]);
  });

  it('checks only the first signature of a known key (later duplicates are dropped unchecked)', () => {
    expect(openNote(`${TEXT}\n${PETER_SIG}${corrupt(PETER_SIG)}`, [peter]).verified).toHaveLength(1);
    expect(errorOf(() => openNote(`${TEXT}\n${corrupt(PETER_SIG)}${PETER_SIG}`, [peter])).code).toBe('invalid_signature');
  });

  it('refuses an ambiguous verifier list only when a signature needs it', () => {
    expect(() => openNote(`${TEXT}\n${ENOCH_SIG}`, [enoch, peter, enoch])).toThrow(/ambiguous verifier key EnochRoot\+af0cfe78/);
    expect(openNote(`${TEXT}\n${PETER_SIG}`, [enoch, peter, enoch]).verified).toHaveLength(1);
  });

  it('accepts 100 signatures and refuses 101', () => {
    expect(openNote(`${TEXT}\n${PETER_SIG.repeat(100)}`, [peter]).verified).toHaveLength(1);
    expect(errorOf(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, [peter])).code).toBe('malformed');
    expect(errorOf(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, [])).code).toBe('malformed');
  });
});

describe('malformed notes', () => {
  const goodNote = `${TEXT}\n${PETER_SIG}`;
  it.each([
    ['text only', TEXT],
    ['text and blank line, no signatures', `${TEXT}\n`],
    ['signature line without final newline', `${TEXT}\n${PETER_SIG.slice(0, -1)}`],
    ['control character in text', `\u0001${goodNote}`],
    ['carriage return', goodNote.replace('problem,\n', 'problem,\r\n')],
    ['tab', goodNote.replace('If you', 'If\tyou')],
    ['lone surrogate', `\ud800${goodNote}`],
    ['key name with a space', `${TEXT}\n\u2014 Bad Name ${PETER_SIG.split(' ')[2]}`],
    ['unexpected line after signatures', `${goodNote}Unexpected line.\n`],
    ['hyphen instead of em dash', `${TEXT}\n-${PETER_SIG.slice(1)}`],
    ['no space after em dash', `${TEXT}\n\u2014${PETER_SIG.slice(2)}`],
    ['name without signature', `${TEXT}\n\u2014 PeterNeumann\n`],
    ['empty signature', `${TEXT}\n\u2014 PeterNeumann \n`],
    ['signature of only a key ID', `${TEXT}\n\u2014 PeterNeumann x08gow==\n`],
    ['unpadded base64', `${TEXT}\n${PETER_SIG.replace('=\n', '\n')}`],
    ['base64 with non-zero padding bits', `${TEXT}\n${PETER_SIG.replace('AM=\n', 'AN=\n')}`],
    ['two spaces before the signature', `${TEXT}\n${PETER_SIG.replace('PeterNeumann ', 'PeterNeumann  ')}`],
    ['empty note', ''],
  ])('%s', (_name, note) => {
    expect(errorOf(() => parseNote(note)).code).toBe('malformed');
    expect(errorOf(() => openNote(note, [peter])).code).toBe('malformed');
  });
});

describe('signNote', () => {
  const signer = noteSignerFromKey(PETER_SKEY);

  it.each([
    ['text without final newline', 'abc'],
    ['empty text', ''],
    ['control character', 'a\u0000b\n'],
    ['lone surrogate', '\udc00\n'],
  ])('refuses %s', (_name, text) => {
    expect(errorOf(() => signNote(text, [signer])).code).toBe('malformed');
  });

  it('refuses to produce an unsigned note', () => {
    expect(errorOf(() => signNote(TEXT, [])).code).toBe('malformed');
  });

  it('refuses a signer with an invalid name', () => {
    expect(errorOf(() => signNote(TEXT, [{ ...signer, name: 'bad name' }])).code).toBe('malformed');
  });

  it('keeps blank lines inside the text: the last blank line separates the signatures', () => {
    const text = 'a\n\n\nb\n\n';
    const opened = openNote(signNote(text, [signer]), [peter]);
    expect(opened.text).toBe(text);
  });
});

describe('decodeNoteBytes', () => {
  it('refuses invalid UTF-8 (the Go test\'s \\xff prefix) and keeps a leading BOM', () => {
    const bytes = Buffer.concat([Buffer.from([0xff]), Buffer.from(`${TEXT}\n${PETER_SIG}`)]);
    expect(errorOf(() => decodeNoteBytes(bytes)).code).toBe('malformed');
    expect(decodeNoteBytes(Buffer.from('\ufeffx\n'))).toBe('\ufeffx\n');
  });
});

describe('properties', () => {
  // Any UTF-8 text without control characters other than newline, ending in newline.
  const noteText = fc
    .string({ unit: 'binary', maxLength: 200 })
    .map((s) => s.replace(/[\u0000-\u0009\u000b-\u001f]/g, '\n') + '\n');
  const keyName = fc.stringMatching(/^[a-z0-9./-]{1,20}$/);
  const seed = fc.uint8Array({ minLength: 32, maxLength: 32 });

  it('signNote then openNote returns the text, every signer verified', () => {
    fc.assert(
      fc.property(noteText, fc.uniqueArray(fc.tuple(keyName, seed), { selector: ([n]) => n, minLength: 1, maxLength: 4 }), (text, keys) => {
        const signers = keys.map(([n, s]) => noteSignerFromSeed(n, s));
        const note = signNote(text, signers);
        const opened = openNote(note, signers.map((s) => parseVerifierKey(s.verifierKey)));
        expect(opened.text).toBe(text);
        expect(opened.verified.length).toBeGreaterThan(0);
        expect(parseNote(note).signatures.map((s) => s.name)).toEqual(signers.map((s) => s.name));
      }),
      { numRuns: 100 },
    );
  });

  it('parseNote recovers the signatures made with makeNoteSignature', () => {
    const sig = fc.record({
      name: keyName,
      keyId: fc.uint8Array({ minLength: 4, maxLength: 4 }),
      signature: fc.uint8Array({ minLength: 1, maxLength: 100 }),
    });
    fc.assert(
      fc.property(noteText, fc.array(sig, { minLength: 1, maxLength: 10 }), (text, sigs) => {
        const made = sigs.map((s) => makeNoteSignature(s.name, s.keyId, s.signature));
        const parsed = parseNote(`${text}\n${made.map((s) => s.line + '\n').join('')}`);
        expect(parsed.text).toBe(text);
        expect(parsed.signatures).toEqual(made);
      }),
    );
  });

  it('any change to a signed text makes the known signature fail', () => {
    const { signerKey, verifierKey } = generateNoteKey('example.com/log');
    const signer = noteSignerFromKey(signerKey);
    const verifier = parseVerifierKey(verifierKey);
    fc.assert(
      fc.property(noteText, noteText, (text, other) => {
        fc.pre(text !== other);
        const sigLines = signNote(text, [signer]).slice(text.length);
        expect(errorOf(() => openNote(other + sigLines, [verifier])).code).toBe('invalid_signature');
      }),
      { numRuns: 100 },
    );
  });
});
