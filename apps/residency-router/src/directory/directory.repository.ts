import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { entityFromRow, PreparedStatement } from '@dcr/persistence';
import { Repository } from 'typeorm';
import { DirectoryEntry } from './directory-entry.entity';

// On the path of every recorded consent and every new person (the Record API's residency round).
// `char(64)[]` keeps the comparison on the key's own type, so the primary key's index serves it.
// Planned per call: a plan kept from when the directory was small scanned the whole table.
const FIND_MANY = new PreparedStatement(
  'residency_directory_find_many',
  `SELECT * FROM "residency_router"."directory_entries" WHERE "reference" = ANY($1::char(64)[])`,
  { reusePlan: false },
);
const INSERT_MISSING = new PreparedStatement<{ reference: string }>(
  'residency_directory_insert_missing',
  `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
   ON CONFLICT ("reference") DO NOTHING RETURNING "reference"`,
);

@Injectable()
export class DirectoryRepository {
  constructor(@InjectRepository(DirectoryEntry) private readonly entries: Repository<DirectoryEntry>) {}

  async findMany(references: string[]): Promise<DirectoryEntry[]> {
    if (references.length === 0) return [];
    const rows = await FIND_MANY.rows(this.entries.manager, [references]);
    return rows.map((row) => entityFromRow(this.entries.metadata, row, new DirectoryEntry()));
  }

  /** Inserts entries that are not there yet; existing rows are left alone. Returns what was inserted. */
  async insertMissing(rows: Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>[]): Promise<string[]> {
    if (rows.length === 0) return [];
    const inserted = await INSERT_MISSING.rows(this.entries.manager, [
      rows.map((row) => row.reference),
      rows.map((row) => row.homeCountry),
      rows.map((row) => row.status),
      rows.map((row) => row.recordedAt),
    ]);
    return inserted.map((row) => row.reference);
  }

  /**
   * Applies an entry learnt from a peer. When two countries recorded the same reference, the earlier
   * record wins (ties go to the lower country code), so every country converges on one home.
   */
  /**
   * Entries a peer homed, in one statement. Per reference the earlier home wins (then the lower
   * country code), and within one home a status change applies.
   */
  async mergeFromPeer(rows: Array<Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>>): Promise<void> {
    if (rows.length === 0) return;
    // One row per reference in a statement (ON CONFLICT cannot touch a row twice): the earliest claim.
    const byReference = new Map<string, (typeof rows)[number]>();
    for (const row of rows) {
      const seen = byReference.get(row.reference);
      const earlier = seen && (row.recordedAt.getTime() < seen.recordedAt.getTime() || (row.recordedAt.getTime() === seen.recordedAt.getTime() && row.homeCountry < seen.homeCountry));
      if (!seen || earlier) byReference.set(row.reference, row);
    }
    const unique = [...byReference.values()];
    await this.entries.query(
      `INSERT INTO "residency_router"."directory_entries" AS e (reference, home_country, status, recorded_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
       ON CONFLICT (reference) DO UPDATE SET
         home_country = EXCLUDED.home_country, status = EXCLUDED.status,
         recorded_at = EXCLUDED.recorded_at, updated_at = now()
       WHERE (EXCLUDED.recorded_at, EXCLUDED.home_country) < (e.recorded_at, e.home_country)
          OR (EXCLUDED.home_country = e.home_country AND EXCLUDED.status <> e.status)`,
      [unique.map((row) => row.reference), unique.map((row) => row.homeCountry), unique.map((row) => row.status), unique.map((row) => row.recordedAt)],
    );
  }
}
