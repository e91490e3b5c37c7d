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

  it('registrations relying on entries homed here, releases and withdrawals of them, and a peer\'s merges of the same people in opposite orders all complete', async () => {
    for (let round = 0; round < 6; round++) {
      // Each person has a reference homed here already (another request's claim, untouched since,
      // so a release may take it out) and one not in the directory yet: a registration inserts
      // the second and relies on the first (marks it, an update), in one statement.
      const people = refs(round, 'homed', 1200);
      const extra = refs(round, 'extra', 1200);
      const claimedAt = new Date(Date.now() - 3_600_000);
      await database.dataSource.query(
        `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
         SELECT r, 'US', 'active', $2, $2 FROM unnest($1::text[]) AS r`,
        [people, claimedAt],
      );
      const at = new Date();
      const persons = people.map((reference, i) => ({ references: [reference, extra[i]] }));
      const shuffled = [...persons].sort((a, b) => a.references[0].slice(9).localeCompare(b.references[0].slice(9)));
      const peer = (list: string[], offset: number) =>
        list.map((reference) => ({ reference, homeCountry: 'DE', status: 'active', recordedAt: new Date(at.getTime() - offset) }));
      const all = [...people, ...extra];
      const outcomes = await Promise.allSettled([
        directory.registerMany(persons, 'US', at),
        directory.mergeFromPeer(peer([...all].reverse(), 1000)),
        directory.releaseClaims([...people].reverse(), 'US'),
        directory.registerMany([...shuffled].reverse(), 'US', at),
        directory.mergeAndAnswer(peer(all, 1000)),
        directory.withdrawClaims(shuffled.map((person) => person.references[0]), 'US', claimedAt),
        directory.releasePeerClaims(peer([...all].sort((a, b) => a.slice(5).localeCompare(b.slice(5))), 1000), 'US'),
      ]);
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
      expect([round, failures]).toEqual([round, []]);
      // One entry at most per reference, homed in one of the two countries.
      const homes: Array<{ home_country: string }> = await database.dataSource.query(
        `SELECT DISTINCT "home_country" FROM "residency_router"."directory_entries" WHERE "reference" = ANY($1::text[]::char(64)[])`,
        [all],
      );
      expect(homes.every(({ home_country }) => home_country === 'US' || home_country === 'DE')).toBe(true);
    }
  }, 120_000);
});
