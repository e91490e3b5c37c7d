import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A mutating POST sent with `Idempotency-Key`: which request it was (a fingerprint of method, path
 * and canonical body) and, once answered, the answer to replay. Scoped by the credential that sent
 * it; kept 24 hours. The key is stored only as a hash and the answer is encrypted with a key derived
 * from it, because answers can carry values shown once (tokens); only the caller can read them back.
 */
@Entity({ name: 'idempotency_keys' })
@Index('IX_idempotency_keys_created', ['createdAt'])
export class IdempotencyKeyRecord {
  @PrimaryColumn({ type: 'text' })
  scope: string;

  @PrimaryColumn({ name: 'key_hash', type: 'text' })
  keyHash: string;

  @Column({ type: 'text' })
  fingerprint: string;

  @Column({ type: 'text' })
  state: 'pending' | 'done';

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  /** base64 of iv ‖ tag ‖ AES-256-GCM ciphertext of the answer body. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @Column({ name: 'response_type', type: 'text', nullable: true })
  responseType: string | null;

  @Column({ name: 'claimed_at', type: 'timestamptz' })
  claimedAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
