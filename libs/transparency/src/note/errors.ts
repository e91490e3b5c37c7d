import type { NoteSignature } from './signed-note';

export type NoteErrorCode = 'malformed' | 'unverified' | 'invalid_signature';

/** What `openNote` had parsed when it refused a note for lack of a verified signature. */
export interface UnverifiedNote {
  text: string;
  unverified: NoteSignature[];
}

/**
 * The single error type of this module, so callers (e.g. a witness mapping failures to HTTP status
 * codes) can switch on `code` instead of matching messages.
 * - `malformed`: the input does not follow the format.
 * - `unverified`: well-formed, but no signature from a known key (`note` holds what was parsed,
 *   like Go's UnverifiedNoteError, so a caller can still inspect it, but MUST NOT trust the text).
 * - `invalid_signature`: a signature from a known key did not verify.
 */
export class NoteError extends Error {
  override readonly name = 'NoteError';

  constructor(
    readonly code: NoteErrorCode,
    message: string,
    readonly note?: UnverifiedNote,
  ) {
    super(message);
  }
}

export function malformed(message: string): NoteError {
  return new NoteError('malformed', message);
}
