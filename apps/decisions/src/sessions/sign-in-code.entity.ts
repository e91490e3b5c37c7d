import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A one-time code mailed to a person signing in, on a session (named by its public id, never by its
 * token) or (`sessionId` = 'inbox') to their inbox; only its keyed hash is kept.
 */
@Entity({ name: 'sign_in_codes' })
@Index('IX_sign_in_codes_session', ['sessionId', 'createdAt'])
@Index('IX_sign_in_codes_email_digest', ['emailDigest', 'createdAt'], { where: '"email_digest" IS NOT NULL' })
@Check('CK_sign_in_codes_no_address', '"email" IS NULL')
export class SignInCode {
  @PrimaryColumn({ type: 'text' })
  id: string;

  /** The session signed in on (its `dcs_…` id), or 'inbox' (INBOX_SIGN_IN). */
  @Column({ name: 'session_id', type: 'text' })
  sessionId: string;

  /** Always null since SignInCodesKeepNoAddress1765600000000 (a session's codes kept their address before). */
  @Column({ type: 'text', nullable: true })
  email: string | null;

  /** The code's address, as its keyed digest (inboxAddressDigest): no code keeps an address. */
  @Column({ name: 'email_digest', type: 'text', nullable: true })
  emailDigest: string | null;

  @Column({ name: 'code_hash', type: 'text' })
  codeHash: string;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** The `sessionId` of inbox sign-in codes. */
export const INBOX_SIGN_IN = 'inbox';
