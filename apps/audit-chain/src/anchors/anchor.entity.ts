import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A signed checkpoint of the country's tree (a C2SP signed note), with the witnesses' cosignatures in `checkpoint`. */
@Entity({ name: 'anchors' })
@Index('UQ_anchors_tree_size', ['treeSize'], { unique: true })
export class AnchorRecord {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tree_size', type: 'bigint' })
  treeSize: string;

  @Column({ name: 'merkle_root', type: 'text' })
  merkleRoot: string;

  @Column({ type: 'text' })
  origin: string;

  @Column({ type: 'text' })
  checkpoint: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
