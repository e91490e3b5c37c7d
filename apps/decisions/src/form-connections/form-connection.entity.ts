import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { FormDefinition } from '@dcr/domain';

/**
 * A hosted form builder's form connected to a flow: the mapping of its questions to the flow's
 * purposes, the definition the mapping was checked against, and the secrets. The webhook secret we
 * issued (and, for a day after a rotation, the one before it) and the optional personal access token
 * are kept sealed (AES-256-GCM under FORM_CONNECTION_SECRET_KEY), each bound to this row and its role.
 * Configuration, not personal data; it lives in the country whose endpoint created it.
 */
@Entity({ name: 'form_connections' })
@Index('IX_form_connections_application', ['applicationId', 'createdAt'])
export class FormConnection {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text' })
  platform: string;

  @Column({ name: 'form_id', type: 'text' })
  formId: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId: string;

  /** As saved: `{email, external_id?, purposes: {key: {field, choice?}}}`. */
  @Column({ type: 'jsonb' })
  mapping: { email: string; external_id?: string; purposes: Record<string, { field: string; choice?: string }> };

  /** The form's questions as the mapping was last checked against them. */
  @Column({ name: 'form_definition', type: 'jsonb' })
  formDefinition: FormDefinition;

  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
  previousSecretSealed: string | null;

  /** When the previous secret was replaced; it is honoured for one day from then. */
  @Column({ name: 'secret_rotated_at', type: 'timestamptz', nullable: true })
  secretRotatedAt: Date | null;

  @Column({ name: 'access_token_sealed', type: 'text', nullable: true })
  accessTokenSealed: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
