import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { DirectoryEntry } from '../src/directory/directory-entry.entity';
import { DirectoryRepository } from '../src/directory/directory.repository';
import { residencyRouterService } from '../src/residency-router.service';

/**
 * Every statement inserting directory entries inserts them in the order of their reference, so two
 * writers inserting the same references wait for each other instead of deadlocking: a country's
 * claim of new people (claimNew, registerMany) and a peer's confirmation of its claim of the same
 * people (mergeAndAnswer, mergeFromPeer), whose lists come in any order. Before, they inserted in
 * the order given, and a claim and a peer's confirmation given the same people in opposite orders
 * deadlocked ("deadlock detected", seen in CI on the two-country race of directory-confirm.spec.ts).
 */
describe('DirectoryRepository: concurrent writers of the same references', () => {
  let database: MigratedServiceDatabase;
  let directory: DirectoryRepository;

  beforeAll(async () => {
    database = await migratedServiceDatabase(residencyRouterService, 'lock_order', 8);
    directory = new DirectoryRepository(database.dataSource.getRepository(DirectoryEntry));
  });
  afterAll(async () => {
    await database?.close();
  });

  const refs = (round: number, label: string, count: number) =>
    Array.from({ length: count }, (_, i) => createHash('sha256').update(`${label}-${round}-${i}`).digest('hex'));

  it('claims, registrations and a peer\'s merges of the same people in opposite orders all complete, each reference homed once', async () => {
    const at = new Date();
    for (let round = 0; round < 6; round++) {
      const people = refs(round, 'person', 400);
      // Half of them homed here already, long ago: a registration marks their entries relied on
      // (an update) while the peer's merges lock the same rows to compare claims.
      if (round % 2 === 1) {
        await database.dataSource.query(
          `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
           SELECT r, 'US', 'active', now() - interval '1 hour', now() - interval '1 hour' FROM unnest($1::text[]) AS r`,
          [people.filter((_, i) => i % 2 === 0)],
        );
      }
      const reversed = [...people].reverse();
      const shuffled = [...people].sort((a, b) => a.slice(7).localeCompare(b.slice(7)));
      const peer = (list: string[], offset: number) =>
        list.map((reference) => ({ reference, homeCountry: 'DE', status: 'active', recordedAt: new Date(at.getTime() - offset) }));
      const outcomes = await Promise.allSettled([
        directory.claimNew(people.map((reference) => ({ reference, minted: [] })), 'US', at),
        directory.mergeAndAnswer(peer(reversed, 1000)),
        directory.registerMany(shuffled.map((reference) => ({ references: [reference] })), 'US', at),
        directory.mergeFromPeer(peer([...shuffled].reverse(), 2000)),
        directory.claimNew(reversed.map((reference) => ({ reference, minted: [] })), 'US', at),
        directory.mergeAndAnswer(peer(shuffled, 500)),
      ]);
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
      expect([round, failures]).toEqual([round, []]);
      // One entry per person, and the earliest claim is the one kept: the peer's, or this country's from long ago.
      const homes = await database.dataSource.query(
        `SELECT "home_country", count(*)::int AS "count" FROM "residency_router"."directory_entries" WHERE "reference" = ANY($1::text[]::char(64)[]) GROUP BY 1 ORDER BY 1`,
        [people],
      );
      expect([round, homes]).toEqual([
        round,
        round % 2 === 1
          ? [
              { home_country: 'DE', count: people.length / 2 },
              { home_country: 'US', count: people.length / 2 },
            ]
          : [{ home_country: 'DE', count: people.length }],
      ]);
    }
  });
});
