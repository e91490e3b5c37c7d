/**
 * c2sp.org/tlog-checkpoint note text:
 *   <origin>\n<decimal tree size>\n<base64 RFC 6962 root hash>\n[<extension line>\n]*
 * Every line non-empty. The origin is opaque: the spec only RECOMMENDS a URL without spaces or
 * '+', and forbids clients from assuming it, so no more than non-empty is enforced.
 */
import { decodeBase64Strict, isUint, isValidNoteChars, parseDecimal } from './encoding';
import { malformed } from './errors';

export interface Checkpoint {
  origin: string;
  /** Number of leaves; limited to 2^53-1 so it stays exact as a JS number. */
  size: number;
  /** 32-byte RFC 6962 (SHA-256) Merkle tree root. */
  rootHash: Buffer;
  /** Opaque extension lines, without newlines. */
  extensions: string[];
}

export const CHECKPOINT_HASH_SIZE = 32;

function checkLine(line: string, what: string): void {
  if (line === '' || line.includes('\n')) throw malformed(`checkpoint ${what} must be one non-empty line`);
  if (!isValidNoteChars(line)) throw malformed(`checkpoint ${what} has invalid UTF-8 or control characters`);
}

export function formatCheckpoint(c: Checkpoint): string {
  checkLine(c.origin, 'origin');
  if (!isUint(c.size)) throw malformed('checkpoint size must be a non-negative safe integer');
  if (c.rootHash.length !== CHECKPOINT_HASH_SIZE) {
    throw malformed(`checkpoint root hash must be ${CHECKPOINT_HASH_SIZE} bytes`);
  }
  c.extensions.forEach((e) => checkLine(e, 'extension line'));
  return [c.origin, String(c.size), c.rootHash.toString('base64'), ...c.extensions].map((l) => l + '\n').join('');
}

/** Parses a checkpoint body (the text of an opened note, not the signed note itself). */
export function parseCheckpoint(body: string): Checkpoint {
  if (!body.endsWith('\n')) throw malformed('checkpoint must end with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) throw malformed('checkpoint needs origin, size and root hash lines');
  const [origin, sizeText, hashText, ...extensions] = lines;
  checkLine(origin, 'origin');
  extensions.forEach((e) => checkLine(e, 'extension line'));
  const size = parseDecimal(sizeText);
  if (size === null) throw malformed('checkpoint size must be a decimal without leading zeros');
  const rootHash = decodeBase64Strict(hashText);
  if (rootHash === null || rootHash.length !== CHECKPOINT_HASH_SIZE) {
    throw malformed(`checkpoint root hash must be ${CHECKPOINT_HASH_SIZE} bytes in base64`);
  }
  return { origin, size, rootHash, extensions };
}
