import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A person an application asks for decisions. Lives only in its home country's database. */
@Entity({ name: 'subjects' })
@Index('UQ_subjects_application_external_id', ['applicationId', 'externalId'], { unique: true, where: '"external_id" IS NOT NULL' })
@Index('UQ_subjects_application_email', ['applicationId', 'email'], { unique: true, where: '"email" IS NOT NULL' })
export class Subject {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'application_id', type: 'text' })
  applicationId: string;

  @Column({ type: 'text', nullable: true })
  email: string | null;

  @Column({ name: 'external_id', type: 'text', nullable: true })
  externalId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
