import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A preview template: a handle on one flow version (draft, active or superseded) that the
 * organisation's tooling previews as a person would see the decision page. Configuration, not
 * personal data; it lives in the country whose endpoint created it (its id names that country) and
 * is never replicated. Nothing is recorded when it is previewed.
 */
@Entity({ name: 'preview_templates' })
@Index('IX_preview_templates_application', ['applicationId', 'createdAt'])
export class PreviewTemplate {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId: string;

  @Column({ name: 'flow_version', type: 'integer' })
  flowVersion: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
