import type { PurposeStatus } from '@dcr/domain';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A bounded ask and its progress. Personal data (the person's e-mail, their decisions) lives only in
 * this country's database. The session token (`dts_…`) is the participant's capability URL and only
 * credential, and is not kept: the row keeps its hash (`token_hash`, hashCredential, the lookup key)
 * and the nonce it was derived from (`token_nonce`: sessionTokenFor with the key SessionTokens
 * derives from SUBJECT_REF_KEY), so the inbox can link the session without storing its token.
 * Sessions opened before SessionTokensKeptAsHashes1766300000000 had random tokens: they keep only
 * the hash (no nonce), open through their link, and the inbox leaves them out. The consent token
 * issued at completion is a credential too and is kept only as a hash.
 */
@Entity({ name: 'decision_sessions' })
@Index('IX_decision_sessions_in_flight', ['expiresAt'], {
  where: `"status" IN ('pending','authenticating','verifying','reviewing','informed','evidenced')`,
})
@Index('UQ_decision_sessions_token_hash', ['tokenHash'], { unique: true })
@Index('IX_decision_sessions_inbox', ['subjectEmail', 'createdAt'], {
  where: `"subject_email" IS NOT NULL AND "status" IN ('pending','authenticating','verifying','reviewing','informed','evidenced')`,
})
@Index('UQ_decision_sessions_consent_token', ['consentTokenHash'], { unique: true, where: '"consent_token_hash" IS NOT NULL' })
@Index('IX_decision_sessions_record', ['recordId'], { where: '"record_id" IS NOT NULL' })
@Index('IX_decision_sessions_ended_person', ['updatedAt'], {
  where: `"status" = 'expired' AND "outcome" IS NULL AND ("subject_email" IS NOT NULL OR "subject_external_id" IS NOT NULL)`,
})
@Index('IX_decision_sessions_subject_consents', ['subjectId', 'applicationId'], { where: `"record_id" IS NOT NULL AND "kind" = 'consent'` })
export class DecisionSession {
  /** The session's public id (`dcs_…`), used in events, the audit trail and the inbox's cursor instead of the token. */
  @PrimaryColumn({ type: 'text' })
  id: string;

  /** hashCredential of the session token: how a token presented finds its session. */
  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  /** What the token is derived from (sessionTokenFor); null for a session opened before tokens were derived. */
  @Column({ name: 'token_nonce', type: 'text', nullable: true })
  tokenNonce: string | null;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text' })
  kind: 'consent' | 'approval';

  @Column({ type: 'text' })
  path: 'standard' | 'informed';

  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'created_via', type: 'text' })
  createdVia: 'decisions' | 'consent_sessions';

  @Column({ name: 'flow_id', type: 'text', nullable: true })
  flowId: string | null;

  @Column({ name: 'flow_version', type: 'integer', nullable: true })
  flowVersion: number | null;

  @Column({ name: 'delivery_mode', type: 'text' })
  deliveryMode: 'embed' | 'popup' | 'redirect' | 'direct';

  @Column({ name: 'embed_origin', type: 'text', nullable: true })
  embedOrigin: string | null;

  @Column({ name: 'redirect_uri', type: 'text', nullable: true })
  redirectUri: string | null;

  @Column({ type: 'text' })
  locale: string;

  @Column({ name: 'subject_id', type: 'text', nullable: true })
  subjectId: string | null;

  /** The e-mail the organisation named, or the one the person proved by signing in. */
  @Column({ name: 'subject_email', type: 'text', nullable: true })
  subjectEmail: string | null;

  @Column({ name: 'subject_external_id', type: 'text', nullable: true })
  subjectExternalId: string | null;

  @Column({ name: 'signed_in_at', type: 'timestamptz', nullable: true })
  signedInAt: Date | null;

  /**
   * The hash of the participant proof the sign-in handed to the browser that signed in: the steps
   * after it (deciding among them) need the proof, not only the session token, which the
   * organisation holds too. Null before sign-in, and for sessions signed in before proofs existed.
   */
  @Column({ name: 'participant_proof_hash', type: 'text', nullable: true })
  participantProofHash: string | null;

  /** When the decision page first showed the notice: the session reached `reviewing` (standard path) or `informed` (informed path). */
  @Column({ name: 'notice_shown_at', type: 'timestamptz', nullable: true })
  noticeShownAt: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  approval: Record<string, unknown> | null;

  @Column({ name: 'deadline_at', type: 'timestamptz', nullable: true })
  deadlineAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'text', nullable: true })
  outcome: string | null;

  /** Per purpose, what the person decided (true granted / false declined or objected). */
  @Column({ name: 'purpose_decisions', type: 'jsonb', nullable: true })
  purposeDecisions: Record<string, boolean> | null;

  /**
   * Per purpose, the outcome as the outcome events carry it (`granted`, `declined`, `objected`,
   * `noticed`): what consent_status answers. Null for approvals and for sessions completed before it
   * was kept (hostedDecisionHistory reads those from purposeDecisions).
   */
  @Column({ name: 'purpose_outcomes', type: 'jsonb', nullable: true })
  purposeOutcomes: Record<string, PurposeStatus> | null;

  /**
   * The purposes the person withdrew one at a time on their records page while the rest of the
   * consent stands (HostedConsentsWithdrawnByPurpose1766800000000): a mark each, as a record's
   * `withdrawals`, appended, never rewriting `purpose_decisions`. Revoking the session takes back what
   * is left.
   */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  withdrawals: Array<{ purpose: string; at: string; channel: string }>;

  @Column({ type: 'jsonb', nullable: true })
  counter: Record<string, unknown> | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  @Column({ name: 'record_id', type: 'text', nullable: true })
  recordId: string | null;

  @Column({ name: 'consent_token_hash', type: 'text', nullable: true })
  consentTokenHash: string | null;

  @Column({ name: 'consent_token_expires_at', type: 'timestamptz', nullable: true })
  consentTokenExpiresAt: Date | null;

  @Column({ name: 'consent_token_consumed_at', type: 'timestamptz', nullable: true })
  consentTokenConsumedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The last change; a revoked session changes no more, so for one that is when it was revoked. */
  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
