/**
 * c2sp.org/tlog-witness `add-checkpoint` bodies.
 *   request   old <size>\n  [<base64 proof hash>\n]{0,63}  \n  <signed checkpoint note>
 *   response  one or more note signature lines (the witness's cosignatures)
 * Only formats live here; the witness's checks (keys, stored size, proof) belong to its caller.
 */
import { CHECKPOINT_HASH_SIZE, parseCheckpoint } from './checkpoint';
import { MAX_NOTE_SIGNATURES, decodeBase64Strict, isUint, isValidNoteChars, parseDecimal } from './encoding';
import { malformed } from './errors';
import { makeNoteSignature, parseNote, parseSignatureLines, type NoteSignature } from './signed-note';

export const ADD_CHECKPOINT_PATH = '/add-checkpoint';
/** Content type of a 409 response, whose body is the witness's latest size and a newline. */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** A client MUST NOT send more proof lines (enough for any tree up to 2^63 leaves). */
export const MAX_CONSISTENCY_PROOF_LINES = 63;

/** HTTP status codes of add-checkpoint, named for what they tell the log. */
export const WitnessStatus = {
  /** Cosigned; body = cosignature lines. */
  ok: 200,
  /** Unparseable request (NoteError `malformed`), e.g. old size greater than the checkpoint size. */
  malformed: 400,
  /**
   * No checkpoint signature verifies against a key the witness trusts for the origin (openNote's
   * `unverified` and `invalid_signature` errors).
   */
  unknownLogKey: 403,
  /** The witness does not know the checkpoint's origin. */
  unknownOrigin: 404,
  /**
   * Old size differs from the witness's latest cosigned size (body = that size, with
   * TLOG_SIZE_CONTENT_TYPE; a client may probe with old size 0 to learn it), or the sizes are
   * equal but the root hashes are not.
   */
  conflict: 409,
  /** The consistency proof does not verify. */
  badProof: 422,
} as const;
export type WitnessStatus = (typeof WitnessStatus)[keyof typeof WitnessStatus];

export interface AddCheckpointRequest {
  oldSize: number;
  /** RFC 6962 consistency proof from oldSize to the checkpoint size, 32-byte hashes. */
  consistencyProof: Buffer[];
  /** The signed checkpoint note, signatures included. */
  checkpointNote: string;
}

/**
 * Checks shared by format and parse: syntax, plus the two rules a well-formed request must keep
 * (old size not past the checkpoint, no proof from size 0). The note is only parsed, not verified.
 */
function checkRequest(r: AddCheckpointRequest): void {
  if (!isUint(r.oldSize)) throw malformed('old size must be a non-negative safe integer');
  if (r.consistencyProof.length > MAX_CONSISTENCY_PROOF_LINES) {
    throw malformed(`more than ${MAX_CONSISTENCY_PROOF_LINES} consistency proof lines`);
  }
  if (r.consistencyProof.some((h) => h.length !== CHECKPOINT_HASH_SIZE)) {
    throw malformed(`proof hashes must be ${CHECKPOINT_HASH_SIZE} bytes`);
  }
  if (r.oldSize === 0 && r.consistencyProof.length > 0) throw malformed('the proof must be empty when old size is 0');
  const checkpoint = parseCheckpoint(parseNote(r.checkpointNote).text);
  if (r.oldSize > checkpoint.size) throw malformed('old size is greater than the checkpoint size');
}

export function formatAddCheckpointRequest(r: AddCheckpointRequest): string {
  checkRequest(r);
  const proof = r.consistencyProof.map((h) => h.toString('base64') + '\n').join('');
  return `old ${r.oldSize}\n${proof}\n${r.checkpointNote}`;
}

export function parseAddCheckpointRequest(body: string): AddCheckpointRequest {
  // Header lines are never empty, so the first blank line ends them; the note may hold more.
  const split = body.indexOf('\n\n');
  if (split < 0) throw malformed('request has no blank line before the checkpoint');
  const [oldLine, ...proofLines] = body.slice(0, split).split('\n');
  const oldSize = oldLine.startsWith('old ') ? parseDecimal(oldLine.slice(4)) : null;
  if (oldSize === null) throw malformed('first line must be "old <size>" without leading zeros');
  if (proofLines.length > MAX_CONSISTENCY_PROOF_LINES) {
    throw malformed(`more than ${MAX_CONSISTENCY_PROOF_LINES} consistency proof lines`);
  }
  const consistencyProof = proofLines.map((line) => {
    const hash = decodeBase64Strict(line);
    if (hash === null || hash.length !== CHECKPOINT_HASH_SIZE) {
      throw malformed(`proof lines must be ${CHECKPOINT_HASH_SIZE}-byte base64 hashes`);
    }
    return hash;
  });
  const request = { oldSize, consistencyProof, checkpointNote: body.slice(split + 2) };
  checkRequest(request);
  return request;
}

/** A 200 body. Lines are rebuilt from name, key ID and signature, not copied from `line`. */
export function formatCosignatureResponse(signatures: readonly NoteSignature[]): string {
  if (signatures.length === 0) throw malformed('a response needs at least one cosignature');
  if (signatures.length > MAX_NOTE_SIGNATURES) throw malformed(`more than ${MAX_NOTE_SIGNATURES} signatures`);
  return signatures.map((s) => makeNoteSignature(s.name, s.keyId, s.signature).line + '\n').join('');
}

/**
 * Parses a 200 body into signatures, unverified. Lengths are not checked against cosignature/v1:
 * a witness may add other cosignature types, which the client must then ignore as unknown keys.
 */
export function parseCosignatureResponse(body: string): NoteSignature[] {
  if (!isValidNoteChars(body)) throw malformed('response has invalid UTF-8 or control characters');
  return parseSignatureLines(body);
}

/** The 409 body: the witness's latest cosigned size. */
export function formatTreeSizeBody(size: number): string {
  if (!isUint(size)) throw malformed('size must be a non-negative safe integer');
  return `${size}\n`;
}

export function parseTreeSizeBody(body: string): number {
  const size = body.endsWith('\n') ? parseDecimal(body.slice(0, -1)) : null;
  if (size === null) throw malformed('size body must be a decimal and a newline');
  return size;
}
