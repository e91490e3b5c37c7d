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

  @Column({ type: 'jsonb' })
  rows: Array<Record<string, unknown>>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
