import { randomBytes } from 'node:crypto';
import { constantTimeEqualHex, DomainError, hashCredential } from '@dcr/domain';
import { DecisionSession } from './decision-session.entity';

/**
 * The participant proof: a secret the step that signs the person in hands to the browser that
 * signed in (and a new sign-in on the same session, POST …/proof, to another). The session token
 * alone is not enough after sign-in: the organisation holds it too (it opened the session), and
 * could otherwise decide in the person's name once they had signed in. The session keeps the hash.
 */
export function newParticipantProof(session: DecisionSession): string {
  const proof = randomBytes(32).toString('base64url');
  session.participantProofHash = hashCredential(proof);
  return proof;
}

/**
 * A step of a session someone signed in to needs its proof (`X-Participant-Proof`): 403 naming the
 * header otherwise. A session not signed in to, or signed in to before proofs existed, needs none.
 */
export function requireParticipantProof(session: DecisionSession, given: string | undefined): void {
  if (!session.signedInAt || !session.participantProofHash) return;
  if (given && constantTimeEqualHex(hashCredential(given), session.participantProofHash)) return;
  throw new DomainError(
    'forbidden',
    'Only the browser that signed in to this request can take its next steps: continue there, or sign in again here with a new code (POST …/sign_in, then POST …/proof)',
    [{ field: 'X-Participant-Proof', reason: given ? "not the proof of this request's sign-in" : 'missing: the steps after signing in need the proof the sign-in answered with' }],
  );
}
