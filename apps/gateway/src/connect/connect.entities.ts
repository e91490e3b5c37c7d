import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Application configuration. Not personal data: authored in one country and replicated whole to the
 * others (see config-replication), so every country can authenticate every application.
 */
@Entity({ name: 'applications' })
@Index('IDX_applications_account', ['accountId'])
export class ApplicationRecord {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  environment: 'sandbox' | 'production';

  @Column({ type: 'text' })
  region: string;

  @Column({ name: 'authored_in', type: 'char', length: 2 })
  authoredIn: string;

  @Column({ type: 'integer' })
  revision: number;

  /** Browser commit: a capture with `commit: true` is recorded at once, on the `<channel>_browser` channel. */
  @Column({ name: 'browser_commit', type: 'boolean', default: false })
  browserCommit: boolean;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** An API token, kept only as the SHA-256 of its value. */
@Entity({ name: 'api_tokens' })
@Index('IDX_api_tokens_application', ['applicationId'])
export class ApiTokenRecord {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Index('UQ_api_tokens_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Last use seen by this country's gateway; each country keeps its own. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}

/** A publishable key: public, but stored as a hash all the same, with a short prefix to recognise it. */
@Entity({ name: 'publishable_keys' })
@Index('IDX_publishable_keys_application', ['applicationId'])
export class PublishableKeyRecord {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Index('UQ_publishable_keys_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}

@Entity({ name: 'allowed_origins' })
export class AllowedOriginRecord {
  @PrimaryColumn({ name: 'application_id', type: 'text' })
  applicationId: string;

  @PrimaryColumn({ type: 'text' })
  origin: string;

  /** When it was (last) added. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** When it was removed (a removed origin is kept, for the countries to merge removals); null while allowed. */
  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt: Date | null;
}
