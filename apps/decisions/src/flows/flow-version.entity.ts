import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One version of a flow. Configuration, not personal data: replicated to every country. An active
 * version's terms never change; a new version is a new row, and the version it supersedes stays
 * to govern what was collected under it.
 */
@Entity({ name: 'flow_versions' })
@Index('IX_flow_versions_application', ['applicationId', 'createdAt'])
export class FlowVersion {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @PrimaryColumn({ type: 'integer' })
  version: number;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text' })
  status: 'draft' | 'active' | 'superseded';

  @Column({ type: 'jsonb' })
  terms: Record<string, unknown>;

  @Column({ name: 'terms_fingerprint', type: 'text' })
  termsFingerprint: string;

  @Column({ name: 'authored_in', type: 'text' })
  authoredIn: string;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'activated_at', type: 'timestamptz', nullable: true })
  activatedAt: Date | null;

  @Column({ name: 'superseded_at', type: 'timestamptz', nullable: true })
  supersededAt: Date | null;
}
