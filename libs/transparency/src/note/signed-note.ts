/**
 * c2sp.org/signed-note: `<text ending in \n>` + `\n` + one or more `— <name> <base64(keyID || sig)>\n`.
 * Parsing follows golang.org/x/mod/sumdb/note's Open, the reference implementation.
 */
import { MAX_NOTE_SIGNATURES, decodeBase64Strict, isValidKeyName, isValidNoteChars } from './encoding';
import { NoteError, malformed } from './errors';
import type { NoteSigner, NoteVerifier } from './keys';

export interface NoteSignature {
  name: string;
  /** The 4-byte key ID (big-endian uint32 in the spec). */
  keyId: Buffer;
  /** The bytes after the key ID (for cosignature/v1: 8-byte timestamp || Ed25519 signature). */
  signature: Buffer;
  /** The signature line as it appears in a note, `— <name> <base64>`, without the newline. */
  line: string;
}

const SIG_PREFIX = '\u2014 ';

/** Builds a signature line from its parts, checking what a parser would check. */
export function makeNoteSignature(name: string, keyId: Uint8Array, signature: Uint8Array): NoteSignature {
  if (!isValidKeyName(name)) throw malformed(`invalid key name ${JSON.stringify(name)}`);
  if (keyId.length !== 4) throw malformed('key id must be 4 bytes');
  if (signature.length === 0) throw malformed('empty signature');
  const id = Buffer.from(keyId);
  const sig = Buffer.from(signature);
  const line = `${SIG_PREFIX}${name} ${Buffer.concat([id, sig]).toString('base64')}`;
  return { name, keyId: id, signature: sig, line };
}

/** Parses one signature line (without its newline). */
export function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(SIG_PREFIX)) throw malformed('signature line must start with an em dash and a space');
  const rest = line.slice(SIG_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space < 0) throw malformed('signature line has no signature');
  const name = rest.slice(0, space);
  const raw = decodeBase64Strict(rest.slice(space + 1));
  if (!isValidKeyName(name)) throw malformed('signature line has an invalid key name');
  // A key ID plus at least one byte of signature, as Go requires.
  if (raw === null || raw.length < 5) throw malformed('signature line has an invalid signature');
  return { name, keyId: raw.subarray(0, 4), signature: raw.subarray(4), line };
}

/**
 * Parses a block of signature lines, each ending in a newline (the tail of a note, or a witness
 * response). The signature limit bounds the work an untrusted note can cause.
 */
export function parseSignatureLines(block: string): NoteSignature[] {
  if (block === '' || !block.endsWith('\n')) throw malformed('signature lines must end with a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES) throw malformed(`more than ${MAX_NOTE_SIGNATURES} signatures`);
  return lines.map(parseSignatureLine);
}

/** Text rules shared by signing and parsing: valid characters and a final newline. */
function checkText(text: string): void {
  if (!text.endsWith('\n')) throw malformed('note text must end with a newline');
  if (!isValidNoteChars(text)) throw malformed('note text has invalid UTF-8 or control characters');
}

export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkText(text);
  if (signers.length === 0) throw malformed('a note needs at least one signature');
  if (signers.length > MAX_NOTE_SIGNATURES) throw malformed(`more than ${MAX_NOTE_SIGNATURES} signatures`);
  const message = Buffer.from(text, 'utf8');
  const lines = signers.map((s) => makeNoteSignature(s.name, s.keyId, s.sign(message)).line + '\n');
  return `${text}\n${lines.join('')}`;
}

/** Splits a note into text and signatures and checks the syntax; verifies nothing. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  if (!isValidNoteChars(note)) throw malformed('note has invalid UTF-8 or control characters');
  // The text may contain blank lines; the signatures start after the *last* one.
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw malformed('note has no blank line before its signatures');
  return { text: note.slice(0, split + 1), signatures: parseSignatureLines(note.slice(split + 2)) };
}

function lookupKey(name: string, keyId: Buffer): string {
  return `${name}\n${keyId.toString('hex')}`;
}

/**
 * Parses a note and checks its signatures against known verifiers (matched on name AND key ID).
 * As in Go: unknown keys go to `unverified` (identical lines once); for a known key only its first
 * signature is checked and later ones are dropped; a failing known signature rejects the note; and
 * so does having no verified signature at all.
 */
export function openNote(
  note: string,
  verifiers: readonly NoteVerifier[],
): { text: string; verified: NoteSignature[]; unverified: NoteSignature[] } {
  const { text, signatures } = parseNote(note);
  const known = new Map<string, NoteVerifier[]>();
  for (const v of verifiers) {
    const k = lookupKey(v.name, v.keyId);
    known.set(k, [...(known.get(k) ?? []), v]);
  }
  const message = Buffer.from(text, 'utf8');
  const verified: NoteSignature[] = [];
  const unverified: NoteSignature[] = [];
  const seenKnown = new Set<string>();
  const seenUnknown = new Set<string>();
  for (const sig of signatures) {
    const k = lookupKey(sig.name, sig.keyId);
    const candidates = known.get(k);
    if (candidates === undefined) {
      if (!seenUnknown.has(sig.line)) unverified.push(sig);
      seenUnknown.add(sig.line);
      continue;
    }
    // Two configured keys with one name and ID: the configuration is wrong, not the note.
    if (candidates.length > 1) throw new Error(`ambiguous verifier key ${sig.name}+${sig.keyId.toString('hex')}`);
    if (seenKnown.has(k)) continue;
    seenKnown.add(k);
    if (!candidates[0].verify(message, sig.signature)) {
      throw new NoteError('invalid_signature', `invalid signature for key ${sig.name}+${sig.keyId.toString('hex')}`);
    }
    verified.push(sig);
  }
  if (verified.length === 0) {
    throw new NoteError('unverified', 'note has no verifiable signatures', { text, unverified });
  }
  return { text, verified, unverified };
}
