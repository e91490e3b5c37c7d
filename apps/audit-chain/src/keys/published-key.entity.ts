import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Every public key this service has signed with, current and retired, so that checkpoints and
 * cosignatures made before a rotation stay verifiable. Private keys are never stored.
 */
@Entity({ name: 'published_keys' })
export class PublishedKey {
  @PrimaryColumn({ name: 'verifier_key', type: 'text' })
  verifierKey: string;

  /** `checkpoint` (the log key) or `cosignature` (the witness key). */
  @Column({ type: 'text' })
  purpose: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'key_id', type: 'text' })
  keyId: string;

  @Column({ name: 'first_used_at', type: 'timestamptz' })
  firstUsedAt: Date;

  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true })
  retiredAt: Date | null;
}
