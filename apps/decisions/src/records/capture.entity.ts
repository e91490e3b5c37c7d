import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A consent captured in the organisation's own form, waiting for its server to commit it with the
 * person's e-mail. It holds the sanitised snapshot only (each purpose's decision and how it was
 * presented, label digests, and for the consent field the rendering evidence), never other input
 * values; the token is kept as a hash. Uncommitted
 * captures expire after 24 hours and leave no record. A capture is committed in one country only:
 * the person's home, which may be another country than the one holding it (`committed_in`, see
 * Captures).
 */
@Entity({ name: 'captures' })
@Index('UQ_captures_token_hash', ['tokenHash'], { unique: true })
@Index('IX_captures_expiry', ['expiresAt'], { where: '"record_id" IS NULL' })
@Index('UQ_captures_render_nonce', ['renderNonce'], { unique: true, where: '"render_nonce" IS NOT NULL' })
@Index('UQ_captures_retry_key', ['applicationId', 'retryKeyDigest'], { unique: true, where: '"retry_key_digest" IS NOT NULL' })
@Index('IX_captures_retry_expiry', ['createdAt'], { where: '"retry_key_digest" IS NOT NULL' })
export class Capture {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId: string;

  @Column({ name: 'flow_version', type: 'integer' })
  flowVersion: number;

  @Column({ type: 'text' })
  channel: string;

  @Column({ type: 'jsonb' })
  decisions: Record<string, { decision: string; default_checked: boolean; mandatory: boolean }>;

  @Column({ name: 'wording_verdict', type: 'jsonb', nullable: true })
  wordingVerdict: Record<string, 'match' | 'drift'> | null;

  @Column({ type: 'text', nullable: true })
  origin: string | null;

  /** A consent field capture: the nonce of its render proof (a rendering captures once). */
  @Column({ name: 'render_nonce', type: 'text', nullable: true })
  renderNonce: string | null;

  /** A consent field capture: the receipt's rendering_evidence entries. */
  @Column({ name: 'rendering_evidence', type: 'jsonb', nullable: true })
  renderingEvidence: Array<Record<string, any>> | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'record_id', type: 'text', nullable: true })
  recordId: string | null;

  /**
   * The country committing or having committed the capture (this one, or the person's home country
   * that claimed it); null while nobody commits it. Captures committed before this column existed
   * have a record id and null here, and were committed here.
   */
  @Column({ name: 'committed_in', type: 'text', nullable: true })
  committedIn: string | null;

  /**
   * A capture requested with an `Idempotency-Key` (CaptureRetry): the key's digest within the
   * gateway's scope, unique in the application, so that a retry, also one sent at the same moment,
   * answers this capture; the digest of the request body it compares a retry's with; and the token
   * sealed under a secret of the key (sealForBearer), the one way a retry can be answered the token.
   * Cleared after 24 hours, when the gateway forgets the key too (Captures.sweep).
   */
  @Column({ name: 'retry_key_digest', type: 'text', nullable: true })
  retryKeyDigest: string | null;

  @Column({ name: 'request_digest', type: 'text', nullable: true })
  requestDigest: string | null;

  @Column({ name: 'sealed_token', type: 'text', nullable: true })
  sealedToken: string | null;

  /** Commits under way for `committed_in`: the last one that fails without a record releases the claim. */
  @Column({ name: 'commit_attempts', type: 'integer', default: 0 })
  commitAttempts: number;
}
