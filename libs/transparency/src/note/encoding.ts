/**
 * Low-level encodings shared by the note formats: strict base64, decimals, key names, note-text
 * character rules and key IDs. Nothing here knows about signatures.
 */
import { createHash } from 'node:crypto';
import { malformed } from './errors';

/** Signature type bytes assigned by c2sp.org/signed-note. */
export const SIG_TYPE_ED25519 = 0x01;
export const SIG_TYPE_COSIGNATURE_V1 = 0x04;

/** Go's sumdb/note refuses more than this many signature lines; the spec asks for at least 16. */
export const MAX_NOTE_SIGNATURES = 100;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard padded base64 (RFC 4648 §4), canonical only. Node's decoder silently skips junk and
 * accepts missing padding, which would make two different strings carry the same signature; the
 * re-encode comparison also rejects non-zero padding bits (allowed by RFC 4648 §3.5).
 */
export function decodeBase64Strict(s: string): Buffer | null {
  if (!BASE64.test(s)) return null;
  const bytes = Buffer.from(s, 'base64');
  return bytes.toString('base64') === s ? bytes : null;
}

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * ASCII decimal with no leading zeros ("0" alone for zero), as checkpoints, cosignature
 * timestamps and witness sizes require. Sizes beyond 2^53-1 cannot be represented as a JS number
 * without rounding, so they are refused rather than silently mangled.
 */
export function parseDecimal(s: string): number | null {
  if (!DECIMAL.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}

export function isUint(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether the string can be encoded as valid UTF-8 (JS strings may hold lone surrogates). */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Key names: non-empty, valid UTF-8, no Unicode space, no '+' (the key text separator).
 * `\p{White_Space}` is the same set as Go's unicode.IsSpace used by sumdb/note. Control
 * characters are also refused: a name holding one could never appear in a valid note.
 */
export function isValidKeyName(name: string): boolean {
  return (
    name.length > 0 &&
    isWellFormed(name) &&
    !/[\p{White_Space}+]/u.test(name) &&
    !/[\u0000-\u001f]/.test(name)
  );
}

/** c2sp.org/signed-note: valid UTF-8 with no ASCII control character other than newline. */
export function isValidNoteChars(s: string): boolean {
  return isWellFormed(s) && !/[\u0000-\u0009\u000b-\u001f]/.test(s);
}

/**
 * Decodes received bytes for `parseNote`/`openNote`: fatal on invalid UTF-8 (a lenient decoder
 * would turn it into U+FFFD) and keeping a leading BOM (TextDecoder drops it by default, which
 * would change the signed text).
 */
export function decodeNoteBytes(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw malformed('note is not valid UTF-8');
  }
}

/** key ID = SHA-256(name || 0x0A || type || public key)[:4] (c2sp.org/signed-note). */
export function computeKeyId(name: string, type: number, publicKey: Uint8Array): Buffer {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

/** Parsed `<name>+<hex key ID>+<base64(type || key)>`, the vkey / skey body. */
export interface KeyText {
  name: string;
  keyId: Buffer;
  type: number;
  key: Buffer;
}

/**
 * Splits on the first two '+' only: the base64 key may itself contain '+'. The key ID is accepted
 * in either hex case, as Go's strconv.ParseUint does.
 */
export function parseKeyText(text: string, what: string): KeyText {
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  if (second < 0) throw malformed(`${what}: expected <name>+<key id>+<key>`);
  const name = text.slice(0, first);
  const hex = text.slice(first + 1, second);
  const raw = decodeBase64Strict(text.slice(second + 1));
  if (!isValidKeyName(name)) throw malformed(`${what}: invalid key name`);
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) throw malformed(`${what}: key id must be 8 hex digits`);
  if (raw === null || raw.length < 2) throw malformed(`${what}: invalid base64 key`);
  return { name, keyId: Buffer.from(hex, 'hex'), type: raw[0], key: raw.subarray(1) };
}

export function formatKeyText(name: string, keyId: Buffer, type: number, key: Uint8Array): string {
  const body = Buffer.concat([Buffer.from([type]), key]).toString('base64');
  return `${name}+${keyId.toString('hex')}+${body}`;
}

export const PRIVATE_KEY_PREFIX = 'PRIVATE+KEY+';
