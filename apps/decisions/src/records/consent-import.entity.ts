import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** The report of a (real) import: what each row became. Dry runs write nothing, this included. */
@Entity({ name: 'consent_imports' })
@Index('IX_consent_imports_application', ['applicationId', 'createdAt'])
export class ConsentImport {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId: string;

  @Column({ type: 'jsonb' })
  summary: { recorded: number; refused: number };

  /** `in_progress` until its last chunk is recorded, then `completed`; `failed` when a chunk failed after others were recorded. */
  @Column({ type: 'text', default: 'completed' })
  status: 'completed' | 'in_progress' | 'failed';

  /** Where and why it stopped (a failed import). */
  @Column({ type: 'jsonb', nullable: true })
  failure: { offset: number; code: string; message: string } | null;

  @Column({ type: 'jsonb' })
  rows: Array<Record<string, unknown>>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
