import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A person signed in to their inbox (by a mailed one-time code). The bearer value is kept only as a
 * hash, the address only sealed under it; it reads the pending requests addressed to this e-mail in
 * this country.
 */
@Entity({ name: 'inbox_sessions' })
@Index('UQ_inbox_sessions_token_hash', ['tokenHash'], { unique: true })
export class InboxSession {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  /** The signed-in address, sealed under the bearer token (sealForBearer): readable only with the token. */
  @Column({ name: 'email_sealed', type: 'text' })
  emailSealed: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
