import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A witness's cosignature of one anchor. */
@Entity({ name: 'witness_receipts' })
export class WitnessReceiptRecord {
  @PrimaryColumn({ name: 'anchor_id', type: 'text' })
  anchorId: string;

  @PrimaryColumn({ type: 'text' })
  witness: string;

  @Column({ type: 'text' })
  signature: string;

  @Column({ type: 'text' })
  cosignature: string;

  @Column({ name: 'signed_at', type: 'timestamptz' })
  signedAt: Date;
}
