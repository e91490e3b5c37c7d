import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The newest entry of an application's chain in this country, so an append never scans the chain. */
@Entity({ name: 'chain_heads' })
export class ChainHead {
  @PrimaryColumn({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'bigint' })
  seq: string;

  @Column({ type: 'text' })
  hash: string;
}
