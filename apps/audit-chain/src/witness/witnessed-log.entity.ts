import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A log this service witnesses: the key its checkpoints must carry and the latest checkpoint cosigned,
 * persisted before the cosignature is returned, so a rollback or a fork is refused even after a restart.
 */
@Entity({ name: 'witnessed_logs' })
export class WitnessedLog {
  @PrimaryColumn({ type: 'text' })
  origin: string;

  @Column({ name: 'verifier_key', type: 'text' })
  verifierKey: string;

  @Column({ name: 'tree_size', type: 'bigint' })
  treeSize: string;

  @Column({ name: 'root_hash', type: 'text' })
  rootHash: string;

  @Column({ type: 'text' })
  checkpoint: string;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
