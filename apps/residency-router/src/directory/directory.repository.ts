import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { DirectoryEntry } from './directory-entry.entity';

@Injectable()
export class DirectoryRepository {
  constructor(@InjectRepository(DirectoryEntry) private readonly entries: Repository<DirectoryEntry>) {}

  findMany(references: string[]): Promise<DirectoryEntry[]> {
    return this.entries.find({ where: { reference: In(references) } });
  }

  /** Inserts entries that are not there yet; existing rows are left alone. Returns what was inserted. */
  async insertMissing(rows: Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>[]): Promise<string[]> {
    if (rows.length === 0) return [];
    const result = await this.entries
      .createQueryBuilder()
      .insert()
      .values(rows)
      .orIgnore()
      .returning(['reference'])
      .execute();
    return (result.raw as { reference: string }[]).map((row) => row.reference);
  }

  /**
   * Applies an entry learnt from a peer. When two countries recorded the same reference, the earlier
   * record wins (ties go to the lower country code), so every country converges on one home.
   */
  async mergeFromPeer(row: Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>): Promise<void> {
    await this.entries.query(
      `INSERT INTO "residency_router"."directory_entries" AS e (reference, home_country, status, recorded_at)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (reference) DO UPDATE SET
         home_country = EXCLUDED.home_country, status = EXCLUDED.status,
         recorded_at = EXCLUDED.recorded_at, updated_at = now()
       WHERE (EXCLUDED.recorded_at, EXCLUDED.home_country) < (e.recorded_at, e.home_country)
          OR (EXCLUDED.home_country = e.home_country AND EXCLUDED.status <> e.status)`,
      [row.reference, row.homeCountry, row.status, row.recordedAt],
    );
  }
}
