import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Every public key receipts were signed with, and when it was in use. Private keys are never stored. */
@Entity({ name: 'signing_keys' })
export class SigningKeyRecord {
  @PrimaryColumn({ type: 'text' })
  kid: string;

  @Column({ type: 'text' })
  alg: string;

  @Column({ name: 'public_jwk', type: 'jsonb' })
  publicJwk: Record<string, unknown>;

  @Column({ name: 'valid_from', type: 'timestamptz' })
  validFrom: Date;

  @Column({ name: 'valid_until', type: 'timestamptz', nullable: true })
  validUntil: Date | null;
}
