/**
 * C2SP transparency-log formats: signed-note, tlog-checkpoint, tlog-cosignature (Ed25519
 * cosignature/v1) and the tlog-witness add-checkpoint bodies. Pure TypeScript over node:crypto.
 */
export { NoteError } from './errors';
export type { NoteErrorCode, UnverifiedNote } from './errors';
export {
  MAX_NOTE_SIGNATURES,
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  computeKeyId,
  decodeNoteBytes,
  isValidKeyName,
} from './encoding';
export { generateNoteKey, noteSignerFromKey, noteSignerFromSeed, parseVerifierKey } from './keys';
export type { NoteSigner, NoteVerifier } from './keys';
export { makeNoteSignature, openNote, parseNote, signNote } from './signed-note';
export type { NoteSignature } from './signed-note';
export { formatCheckpoint, parseCheckpoint } from './checkpoint';
export type { Checkpoint } from './checkpoint';
export {
  cosignatureMessage,
  cosignatureTimestamp,
  cosignerFromKey,
  cosignerFromSeed,
  generateCosignerKey,
  verifyCosignature,
} from './cosignature';
export type { Cosigner } from './cosignature';
export {
  ADD_CHECKPOINT_PATH,
  MAX_CONSISTENCY_PROOF_LINES,
  TLOG_SIZE_CONTENT_TYPE,
  WitnessStatus,
  formatAddCheckpointRequest,
  formatCosignatureResponse,
  formatTreeSizeBody,
  parseAddCheckpointRequest,
  parseCosignatureResponse,
  parseTreeSizeBody,
} from './witness-protocol';
