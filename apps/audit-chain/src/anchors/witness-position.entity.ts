import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The tree size a witness last cosigned for this log, so the next request carries a consistency proof from there. */
@Entity({ name: 'witness_positions' })
export class WitnessPosition {
  @PrimaryColumn({ type: 'text' })
  witness: string;

  @Column({ name: 'tree_size', type: 'bigint' })
  treeSize: string;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
