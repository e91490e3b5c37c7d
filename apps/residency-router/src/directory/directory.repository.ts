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
/**
 * `registerMany` in one round trip: per person ($2 numbers each reference's person), the home is that
 * of the first of their references already in the directory, else this country ($3); the references
 * of the people homed here that are not there yet are inserted. Answers the homes found and the
 * references inserted. Planned per call, like FIND_MANY.
 */
const REGISTER_MANY = new PreparedStatement<{ homes: Array<[number, string]>; inserted: string[] }>(
  'residency_directory_register_many',
  `WITH "asked" AS (
     SELECT a."reference"::char(64) AS "reference", a."person", a."position"
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS a("reference", "person", "position")
   ), "found" AS (
     SELECT a."person", a."position", a."reference", e."home_country"
       FROM "asked" a JOIN "residency_router"."directory_entries" e ON e."reference" = a."reference"
   ), "homes" AS (
     SELECT DISTINCT ON ("person") "person", "home_country" FROM "found" ORDER BY "person", "position"
   ), "inserted" AS (
     INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
     SELECT DISTINCT a."reference", $3::char(2), 'active', $4::timestamptz FROM "asked" a
      WHERE NOT EXISTS (SELECT 1 FROM "found" f WHERE f."reference" = a."reference")
        AND NOT EXISTS (SELECT 1 FROM "homes" h WHERE h."person" = a."person" AND h."home_country" <> $3::char(2))
     ON CONFLICT ("reference") DO NOTHING RETURNING "reference"
   )
   SELECT (SELECT COALESCE(json_agg(json_build_array("person", "home_country")), '[]') FROM "homes") AS "homes",
          (SELECT COALESCE(json_agg(rtrim("reference")), '[]') FROM "inserted") AS "inserted"`,
  { reusePlan: false },
);

@Injectable()
export class DirectoryRepository {
  constructor(@InjectRepository(DirectoryEntry) private readonly entries: Repository<DirectoryEntry>) {}

  async findMany(references: string[]): Promise<DirectoryEntry[]> {
    if (references.length === 0) return [];
    const rows = await FIND_MANY.rows(this.entries.manager, [references]);
    return rows.map((row) => entityFromRow(this.entries.metadata, row, new DirectoryEntry()));
  }

  /**
   * Homes many people at once (each a list of references, in order of preference): answers each
   * person's home country where a reference of theirs is already in the directory, and inserts the
   * missing references of everyone else as homed in `country`. Returns those homes by person and
   * the references inserted.
   */
  async registerMany(people: string[][], country: string, recordedAt: Date): Promise<{ homes: Map<number, string>; inserted: string[] }> {
    const references = people.flat();
    if (references.length === 0) return { homes: new Map(), inserted: [] };
    const [row] = await REGISTER_MANY.rows(this.entries.manager, [references, people.flatMap((refs, person) => refs.map(() => person)), country, recordedAt]);
    return { homes: new Map(row.homes), inserted: row.inserted };
  }

  /**
   * Entries learnt from peers, in one statement. When two countries recorded the same reference, the
   * earlier record wins (ties go to the lower country code), so every country converges on one home;
   * within one home a status change applies. Rows are given in the order they arrived.
   */
  async mergeFromPeer(rows: Array<Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>>): Promise<void> {
    if (rows.length === 0) return;
    // One row per reference in a statement (ON CONFLICT cannot touch a row twice): the earliest
    // claim, and of the same claim the row that arrived last (a later status of it).
    const byReference = new Map<string, (typeof rows)[number]>();
    for (const row of rows) {
      const seen = byReference.get(row.reference);
      const seenFirst = seen && (seen.recordedAt.getTime() < row.recordedAt.getTime() || (seen.recordedAt.getTime() === row.recordedAt.getTime() && seen.homeCountry < row.homeCountry));
      if (!seenFirst) byReference.set(row.reference, row);
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
