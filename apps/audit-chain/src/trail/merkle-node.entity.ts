import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The hash of a complete (perfect) subtree of the country's Merkle tree: level 0 holds the leaf
 * hashes, level L index i covers leaves [i·2^L, (i+1)·2^L). Any root or proof needs O(log n) of them.
 */
@Entity({ name: 'merkle_nodes' })
export class MerkleNode {
  @PrimaryColumn({ type: 'smallint' })
  level: number;

  @PrimaryColumn({ name: 'idx', type: 'bigint' })
  index: string;

  @Column({ type: 'bytea' })
  hash: Buffer;
}
