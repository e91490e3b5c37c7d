import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One opaque reference and where it lives. Never an e-mail, a name or an organisation's own id. */
@Entity({ name: 'directory_entries' })
export class DirectoryEntry {
  @PrimaryColumn({ type: 'char', length: 64 })
  reference: string;

  @Column({ name: 'home_country', type: 'char', length: 2 })
  homeCountry: string;

  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  /** How many registrations found the entry homed here and relied on it (RELY_ON). */
  @Column({ type: 'integer', default: 0 })
  reliances: number;

  /** How many releases of it came from parties that did not write the person (RELEASE_CLAIMS). */
  @Column({ type: 'integer', default: 0 })
  releases: number;
}
