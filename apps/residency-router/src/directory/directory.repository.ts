import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { claimPrecedes } from '@dcr/domain';
import { entityFromRow, PreparedStatement, retriedOnDeadlock } from '@dcr/persistence';
import { Repository } from 'typeorm';
import { DirectoryEntry } from './directory-entry.entity';

/**
 * A registration commits without waiting for its WAL to reach the disk (`synchronous_commit` off for
 * its own transaction only; the last column of the registration statements sets it). What a caller
 * writes after registering a person (the person's row and records, in the same country's database)
 * commits with a flush, and PostgreSQL flushes its WAL in order, so once that write is acknowledged
 * the registration is on disk too; a crash before it loses both together, as if the request had
 * never come. Waiting for the flush of each registration added about 1.5 ms to every Record API
 * batch (docs/performance.md, sixteenth session). A peer's sync event (MERGE_FROM_PEER) keeps
 * waiting: nothing after it would flush it, and the peer does not send it again. A peer's
 * confirmation (MERGE_AND_ANSWER) does not wait either; see there why losing it does no harm.
 */
/*
 * Every statement inserting entries inserts them in the order of their reference (`ORDER BY 1`), so
 * two statements writing some of the same references (a registration here and a peer's confirmation
 * of its claim of the same people, their lists in any order) wait for each other, one after the
 * other, instead of deadlocking (test/directory-lock-order.spec.ts). Every statement updating or
 * deleting several entries locks them first in the same order (lockedInOrder), for the same reason: a registration marking entries relied on, a
 * release or withdrawal of claims and a peer's merge of the same references, each in its own
 * order, wait for each other instead of deadlocking. One order cannot cover REGISTER_MANY, which
 * inserts the references not there yet and then marks those found (two passes, each in order): a
 * statement locking some of both in one pass (a peer's merge) can wait for its insert while it
 * waits for the merge's lock on one it found. Every write of the directory is one autocommit
 * statement (a release: one transaction of two), so each is run again when PostgreSQL ends it as
 * such a deadlock's victim (retriedOnDeadlock): the others go on, and it runs after them.
 */
const COMMIT_WITHOUT_FLUSH = `set_config('synchronous_commit', 'off', true) AS "commit"`;

/**
 * The references of the entries (`l`) that match `condition`, locked (FOR UPDATE) in the order of
 * their reference: the rows a statement then updates or deletes (already locked, it waits for no
 * one there). A row another writer changed meanwhile is locked once that writer commits, and only if
 * it still matches, as an UPDATE or DELETE of its own would decide.
 */
function lockedInOrder(condition: string): string {
  return `SELECT l."reference" FROM "residency_router"."directory_entries" l WHERE ${condition} ORDER BY l."reference" FOR UPDATE OF l`;
}

// On the path of every recorded consent and every new person (the Record API's residency round).
// `char(64)[]` keeps the comparison on the key's own type, so the primary key's index serves it.
// Planned per call: a plan kept from when the directory was small scanned the whole table.
const FIND_MANY = new PreparedStatement(
  'residency_directory_find_many',
  `SELECT * FROM "residency_router"."directory_entries" WHERE "reference" = ANY($1::char(64)[])`,
  { reusePlan: false },
);
/**
 * A claim's entry is inserted with `updated_at` equal to its `recorded_at` and no reliances: one
 * party (the claimant) may still write the person. A registration that finds an entry homed here
 * (another request's claim, which it then writes the person under) is one more party: it moves
 * `updated_at` past `recorded_at` and counts itself in `reliances`, so that a release of the claim
 * (RELEASE_CLAIMS, after the claimant did not write the person) leaves the entry the other request
 * relies on, until that one releases it too.
 */
const RELY_ON = `UPDATE "residency_router"."directory_entries" e SET "updated_at" = greatest(now(), e."recorded_at" + interval '1 microsecond'), "reliances" = e."reliances" + 1`;

/**
 * `registerMany` in one round trip: per person ($2 numbers each reference's person), the home is that
 * of the first of their references already in the directory, else this country ($3); the references
 * of the people homed here that are not there yet are inserted. Answers the homes found and the
 * references inserted, and each reference found homed in another country (`elsewhere`, by person:
 * a person found homed here by one reference and elsewhere by another). Planned per call, like
 * FIND_MANY. An entry found homed here is marked relied on (RELY_ON), so a failed write's release
 * leaves it; one a release took out between the statement's snapshot and the mark is answered in
 * `released` (its person is registered again).
 */
const REGISTER_MANY = new PreparedStatement<{ homes: Array<[number, string]>; inserted: string[]; found: string[]; released: string[]; elsewhere: Array<[number, string]> }>(
  'residency_directory_register_many',
  `WITH "asked" AS (
     SELECT a."reference"::char(64) AS "reference", a."person", a."position"
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS a("reference", "person", "position")
   ), "found" AS (
     SELECT a."person", a."position", a."reference", e."home_country"
       FROM "asked" a JOIN "residency_router"."directory_entries" e ON e."reference" = a."reference"
   ), "homes" AS (
     SELECT DISTINCT ON ("person") "person", "home_country" FROM "found" ORDER BY "person", "position"
   ), "relied" AS (
     ${RELY_ON}
       FROM (${lockedInOrder(`l."reference" IN (SELECT "reference" FROM "found" WHERE "home_country" = $3::char(2)) AND l."home_country" = $3::char(2)`)}) f
      WHERE e."reference" = f."reference" AND e."home_country" = $3::char(2)
     RETURNING e."reference"
   ), "inserted" AS (
     INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
     SELECT DISTINCT a."reference", $3::char(2), 'active', $4::timestamptz, $4::timestamptz FROM "asked" a
      WHERE NOT EXISTS (SELECT 1 FROM "found" f WHERE f."reference" = a."reference")
        AND NOT EXISTS (SELECT 1 FROM "homes" h WHERE h."person" = a."person" AND h."home_country" <> $3::char(2))
      ORDER BY 1
     ON CONFLICT ("reference") DO NOTHING RETURNING "reference"
   )
   SELECT (SELECT COALESCE(json_agg(json_build_array("person", "home_country")), '[]') FROM "homes") AS "homes",
          (SELECT COALESCE(json_agg(rtrim("reference")), '[]') FROM "inserted") AS "inserted",
          (SELECT COALESCE(json_agg(DISTINCT rtrim(f."reference")), '[]') FROM "found" f) AS "found",
          (SELECT COALESCE(json_agg(DISTINCT rtrim(f."reference")), '[]') FROM "found" f
            WHERE f."home_country" = $3::char(2) AND NOT EXISTS (SELECT 1 FROM "relied" r WHERE r."reference" = f."reference")) AS "released",
          (SELECT COALESCE(json_agg(json_build_array(f."person", f."home_country") ORDER BY f."position"), '[]') FROM "found" f WHERE f."home_country" <> $3::char(2)) AS "elsewhere",
          ${COMMIT_WITHOUT_FLUSH}`,
  { reusePlan: false },
);

/**
 * `registerMany` when every person has one reference that may already be in the directory (their
 * e-mail address, say) and otherwise only references the caller has just made (a new person's id):
 * those references not there yet are inserted, and with each the person's made ones. No scan to
 * choose (the table is touched only through the primary key's conflict check), so its plan is kept:
 * planning REGISTER_MANY on every call was a fifth of its cost (docs/performance.md, fifteenth
 * session). $1: each person's reference; $2 and $3: pairs of a person's reference and a reference
 * made for them. Answers the references inserted, of each kind (`own`, `made`). A reference
 * that was there already (or that another writer inserts meanwhile) is not answered, and its person
 * goes through REGISTER_MANY.
 */
const INSERT_NEW_PEOPLE = new PreparedStatement<{ own: string[]; made: string[] }>(
  'residency_directory_insert_new_people',
  `WITH "own" AS (
     INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
     SELECT DISTINCT r::char(64), $4::char(2), 'active', $5::timestamptz, $5::timestamptz FROM unnest($1::text[]) AS r ORDER BY 1
     ON CONFLICT ("reference") DO NOTHING RETURNING "reference"
   ), "made" AS (
     INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
     SELECT DISTINCT m."made"::char(64), $4::char(2), 'active', $5::timestamptz, $5::timestamptz
       FROM unnest($2::text[], $3::text[]) AS m("owner", "made") JOIN "own" o ON o."reference" = m."owner"::char(64) ORDER BY 1
     ON CONFLICT ("reference") DO NOTHING RETURNING "reference"
   )
   SELECT (SELECT COALESCE(json_agg(rtrim("reference")), '[]') FROM "own") AS "own",
          (SELECT COALESCE(json_agg(rtrim("reference")), '[]') FROM "made") AS "made",
          ${COMMIT_WITHOUT_FLUSH}`,
);

/**
 * Entries learnt from peers, by the directory's rule: the earlier claim wins (ties to the lower
 * country code); within one home a status change applies.
 */
const MERGE = `INSERT INTO "residency_router"."directory_entries" AS e (reference, home_country, status, recorded_at)
   SELECT u.reference::char(64), u.home_country, u.status, u.recorded_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(reference, home_country, status, recorded_at) ORDER BY 1
   ON CONFLICT (reference) DO UPDATE SET
     home_country = EXCLUDED.home_country, status = EXCLUDED.status,
     recorded_at = EXCLUDED.recorded_at, updated_at = now()
   WHERE (EXCLUDED.recorded_at, EXCLUDED.home_country) < (e.recorded_at, e.home_country)
      OR (EXCLUDED.home_country = e.home_country AND EXCLUDED.status <> e.status)`;

/**
 * A peer's sync event (`mergeFromPeer`). An insert arbitrated by the primary key: no scan to
 * choose, so its plan is kept too.
 */
const MERGE_FROM_PEER = new PreparedStatement('residency_directory_merge_from_peer', MERGE);

/**
 * MERGE_FROM_PEER that also counts the entries homed in this country ($5) it gave to another
 * (`mergeFromPeer` with `takenFrom`): a sync event or a start's catch-up carrying an earlier claim of
 * someone homed here, who may have been recorded here meanwhile (two countries that could not reach
 * each other). Off the request path since the confirmation: planned per call.
 */
const MERGE_COUNTING_TAKEN = new PreparedStatement<{ taken: number }>(
  'residency_directory_merge_counting_taken',
  `WITH "mine" AS (
     SELECT "reference" FROM "residency_router"."directory_entries" WHERE "reference" = ANY($1::text[]::char(64)[]) AND "home_country" = $5::char(2)
   ), "merged" AS (
     ${MERGE}
     RETURNING e.reference, e.home_country
   )
   SELECT count(*)::int AS "taken" FROM "merged" m JOIN "mine" USING ("reference") WHERE m."home_country" <> $5::char(2)`,
  { reusePlan: false },
);

/**
 * A peer's confirmation request (`mergeAndAnswer`): the same insert as MERGE_FROM_PEER,
 * answering the rows it wrote (inserted, or replaced by an earlier claim). A reference it answers
 * nothing for kept the entry that was there (an earlier claim, or the same): `mergeAndAnswer` reads
 * those afterwards. An insert arbitrated by the primary key, as MERGE_FROM_PEER: its plan is kept
 * (joining the table in the same statement left a kept plan free to scan it).
 *
 * It commits without waiting for its flush, like a registration: the copy of a peer's claim is not
 * what keeps a person in one country. If it is lost in a crash, this country homing the person
 * later confirms its own claim with that peer, whose entry (flushed with the person's data there)
 * is earlier, and gives way (DirectoryService.settleWithPeers).
 */
const MERGE_AND_ANSWER = new PreparedStatement<{ reference: string; home_country: string; status: string; recorded_at: Date }>(
  'residency_directory_merge_and_answer',
  `${MERGE}
   RETURNING rtrim(e.reference) AS "reference", e.home_country, e.status, e.recorded_at, ${COMMIT_WITHOUT_FLUSH}`,
);

/**
 * A page of the entries homed in one country after a reference (`directory.pull`), through the
 * primary key's order; read when a peer starts, not on any request's path.
 */
const HOMED_IN = new PreparedStatement(
  'residency_directory_homed_in',
  `SELECT * FROM "residency_router"."directory_entries"
    WHERE "home_country" = $1 AND "reference" > $2::char(64) ORDER BY "reference" LIMIT $3`,
  { reusePlan: false },
);

/** A registration's own entries taken out again (`withdrawClaims`): only those still as it wrote them. */
const WITHDRAW_CLAIMS = new PreparedStatement(
  'residency_directory_withdraw_claims',
  `DELETE FROM "residency_router"."directory_entries" e
    USING (${lockedInOrder(`l."reference" = ANY($1::char(64)[]) AND l."home_country" = $2 AND l."recorded_at" = $3`)}) l
    WHERE e."reference" = l."reference" AND e."home_country" = $2 AND e."recorded_at" = $3`,
  { reusePlan: false },
);

/**
 * The releases of entries whose party did not write the person (`releaseClaims`): of the entries
 * homed here ($2) and active, each one given is counted released once more for each time it is
 * given (one party each: a request that registered the same person twice, a try decided again,
 * was two parties; locked in order, see lockedInOrder), answering those whose every party has now
 * released them: `releases` reaches one
 * more than its `reliances` (the claimant and each registration that relied on it, see RELY_ON),
 * and none of them wrote the person, so it names no one. A party that writes the person never
 * releases, so an entry someone wrote under stays. An entry relied on before the directory counted
 * reliances (`updated_at` past `recorded_at` with none counted) is never answered, as before.
 */
const COUNT_RELEASES = new PreparedStatement<{ reference: string; released: boolean }>(
  'residency_directory_count_releases',
  `UPDATE "residency_router"."directory_entries" e SET "releases" = e."releases" + r."parties"
     FROM (${lockedInOrder(`l."reference" = ANY($1::char(64)[]) AND l."home_country" = $2::char(2) AND l."status" = 'active'`)}) l,
          (SELECT "reference"::char(64) AS "reference", count(*)::int AS "parties" FROM unnest($1::text[]) AS "reference" GROUP BY 1) r
    WHERE e."reference" = l."reference" AND r."reference" = l."reference"
    RETURNING rtrim(e."reference") AS "reference", e."releases" >= e."reliances" + 1 AND (e."reliances" > 0 OR e."updated_at" = e."recorded_at") AS "released"`,
  { reusePlan: false },
);

/** The entries whose every party released them (COUNT_RELEASES), taken out, in the same transaction; answered for the peers. */
const RELEASE_CLAIMS = new PreparedStatement<{ reference: string; recorded_at: Date }>(
  'residency_directory_release_claims',
  `DELETE FROM "residency_router"."directory_entries" e
    WHERE e."reference" = ANY($1::char(64)[])
    RETURNING rtrim(e."reference") AS "reference", e."recorded_at"`,
  { reusePlan: false },
);

/** A peer's released claims (`releasePeerClaims`): each copy deleted only if it is that very claim. */
const RELEASE_PEER_CLAIMS = new PreparedStatement(
  'residency_directory_release_peer_claims',
  `DELETE FROM "residency_router"."directory_entries" e
    USING (${lockedInOrder(`EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS r("reference", "home_country", "recorded_at")
             WHERE l."reference" = r."reference"::char(64) AND l."home_country" = r."home_country"::char(2) AND l."recorded_at" = r."recorded_at")
        AND l."home_country" <> $4::char(2)`)}) l,
          unnest($1::text[], $2::text[], $3::timestamptz[]) AS r("reference", "home_country", "recorded_at")
    WHERE e."reference" = l."reference" AND e."reference" = r."reference"::char(64) AND e."home_country" = r."home_country"::char(2) AND e."recorded_at" = r."recorded_at"
      AND e."home_country" <> $4::char(2)`,
  { reusePlan: false },
);

/** The registration's and the peer merge's statements, for bench/directory-statements.js. */
export const DIRECTORY_STATEMENTS = { registerMany: REGISTER_MANY, insertNewPeople: INSERT_NEW_PEOPLE, mergeFromPeer: MERGE_FROM_PEER, mergeAndAnswer: MERGE_AND_ANSWER };

/** How many times `registerMany` registers a person who raced with another writer (the last time, it reads where they live). */
const REGISTER_ROUNDS = 2;

/** A person to home: references that may be known already, and references just made for them. */
export interface DirectoryPerson {
  references: string[];
  minted?: string[];
}

@Injectable()
export class DirectoryRepository {
  constructor(@InjectRepository(DirectoryEntry) private readonly entries: Repository<DirectoryEntry>) {}

  async findMany(references: string[]): Promise<DirectoryEntry[]> {
    if (references.length === 0) return [];
    const rows = await FIND_MANY.rows(this.entries.manager, [references]);
    return rows.map((row) => entityFromRow(this.entries.metadata, row, new DirectoryEntry()));
  }

  /**
   * Homes many people at once: answers each person's home country where a reference of theirs is
   * already in the directory, and inserts the missing references of everyone else (their made ones
   * too) as homed in `country`. Returns those homes by person and the references inserted.
   *
   * People with one reference that may be known, besides made ones, go first through
   * INSERT_NEW_PEOPLE (a Record API batch of new people: one statement whose plan is kept); the
   * others, and those whose reference was there already, through REGISTER_MANY.
   */
  async registerMany(
    people: DirectoryPerson[],
    country: string,
    recordedAt: Date,
    round = 1,
  ): Promise<{ homes: Map<number, string>; inserted: string[]; split: Map<number, string> }> {
    const homes = new Map<number, string>();
    const inserted: string[] = [];
    /** People found homed here by one reference and in another country (the value) by another. */
    const split = new Map<number, string>();
    const single = people.filter((person) => person.references.length === 1);
    const homedHere = new Set<string>();
    if (single.length > 0) {
      const claimed = await this.claimNew(single.map((person) => ({ reference: person.references[0], minted: person.minted ?? [] })), country, recordedAt);
      inserted.push(...claimed.inserted);
      for (const reference of claimed.homed) homedHere.add(reference);
    }
    const rest = people.map((person, index) => ({ person, index })).filter(({ person }) => person.references.length !== 1 || !homedHere.has(person.references[0]));
    const references = rest.flatMap(({ person }) => [...person.references, ...(person.minted ?? [])]);
    if (references.length > 0) {
      const owner = rest.flatMap(({ person }, i) => [...person.references, ...(person.minted ?? [])].map(() => i));
      const [row] = await retriedOnDeadlock(() => REGISTER_MANY.rows(this.entries.manager, [references, owner, country, recordedAt]));
      for (const [i, home] of row.homes) homes.set(rest[i].index, home);
      for (const [i, home] of row.elsewhere) if (homes.get(rest[i].index) === country && !split.has(rest[i].index)) split.set(rest[i].index, home);
      inserted.push(...row.inserted);
      // A person found homed here by an entry a failed write's release took out after the statement's
      // snapshot was taken (`released`) is registered again whole, so their entries are found: marked
      // relied on, or answered where they live. A reference of a person that the statement neither
      // found nor inserted was inserted by another writer (a peer's confirmation or sync event,
      // another registration) after that snapshot: this call is then no party of its entry (neither
      // its claimant nor relying on it), and a failed write's release of it would take out an entry
      // the other writer's person may hold. Only those references are registered again, so they are
      // found (marked relied on: one party each, as every other reference of the call's people is),
      // and where they live decides: a person none of whose references was found (only some of them
      // inserted, the others as this country's) is homed where those live, and a person found homed
      // here with such a reference homed elsewhere is answered that other country (`split`).
      const written = new Set(row.inserted);
      const found = new Set(row.found);
      const released = new Set(row.released);
      const whole = rest.filter(({ person, index }) => homes.get(index) === country && [...person.references, ...(person.minted ?? [])].some((reference) => released.has(reference)));
      // (A person found homed elsewhere has nothing inserted here, and is not registered again.)
      const partly = rest
        .filter((one) => !whole.includes(one) && (homes.get(one.index) ?? country) === country)
        .map((one) => ({ ...one, missing: one.person.references.filter((reference) => !found.has(reference) && !written.has(reference)) }))
        .filter(({ missing }) => missing.length > 0);
      const raced = [...whole.map((one) => ({ ...one, asked: one.person })), ...partly.map((one) => ({ ...one, asked: { references: one.missing, minted: [] } as DirectoryPerson }))];
      if (raced.length > 0 && round < REGISTER_ROUNDS) {
        const again = await this.registerMany(
          raced.map(({ asked }) => asked),
          country,
          recordedAt,
          round + 1,
        );
        raced.forEach(({ index, asked, person }, i) => {
          const home = again.homes.get(i);
          const other = again.split.get(i);
          if (asked === person || !homes.has(index)) {
            // Decided again (whole), or decided by the references found now (none was before).
            homes.delete(index);
            split.delete(index);
            if (home) homes.set(index, home);
            if (other) split.set(index, other);
          } else if (homes.get(index) === country && (home ?? country) !== country && !split.has(index)) {
            split.set(index, home!);
          } else if (other && !split.has(index)) {
            split.set(index, other);
          }
        });
        inserted.push(...again.inserted);
      } else if (raced.length > 0) {
        const found = new Map((await this.findMany(raced.flatMap(({ person }) => person.references))).map((entry) => [entry.reference.trim(), entry.homeCountry]));
        for (const { person, index } of raced) {
          const home = person.references.map((reference) => found.get(reference)).find((value) => value !== undefined);
          if (home) homes.set(index, home);
        }
      }
    }
    return { homes, inserted, split };
  }

  /**
   * Homes in `country` the people whose reference is in no entry yet, each with their made
   * references (INSERT_NEW_PEOPLE, one statement whose plan is kept); nothing is written for a
   * person whose reference is there already, or is being inserted by another writer meanwhile.
   * Returns the references so homed (`homed`) and every reference inserted (theirs and the made ones).
   */
  async claimNew(people: Array<{ reference: string; minted: string[] }>, country: string, recordedAt: Date): Promise<{ homed: string[]; inserted: string[] }> {
    if (people.length === 0) return { homed: [], inserted: [] };
    const own = people.map((person) => person.reference);
    const owners = people.flatMap((person) => person.minted.map(() => person.reference));
    const made = people.flatMap((person) => person.minted);
    const [row] = await retriedOnDeadlock(() => INSERT_NEW_PEOPLE.rows(this.entries.manager, [own, owners, made, country, recordedAt]));
    return { homed: row.own, inserted: [...row.own, ...row.made] };
  }

  /**
   * Entries learnt from peers, in one statement. When two countries recorded the same reference, the
   * earlier record wins (ties go to the lower country code), so every country converges on one home;
   * within one home a status change applies. Rows are given in the order they arrived. With
   * `takenFrom` (this country): answers how many entries homed here went to another country.
   */
  async mergeFromPeer(rows: PeerEntry[], takenFrom?: string): Promise<number> {
    if (rows.length === 0) return 0;
    const columns = mergeParameters(rows);
    if (takenFrom === undefined) {
      await retriedOnDeadlock(() => MERGE_FROM_PEER.run(this.entries.manager, columns));
      return 0;
    }
    const [{ taken }] = await retriedOnDeadlock(() => MERGE_COUNTING_TAKEN.rows(this.entries.manager, [...columns, takenFrom]));
    return taken;
  }

  /**
   * Deletes the entries a registration inserted (`references`, homed in `country` at `recordedAt`)
   * when it cannot be confirmed; an entry a peer's earlier claim has replaced meanwhile stays.
   */
  async withdrawClaims(references: string[], country: string, recordedAt: Date): Promise<void> {
    if (references.length === 0) return;
    await retriedOnDeadlock(() => WITHDRAW_CLAIMS.run(this.entries.manager, [references, country, recordedAt]));
  }

  /**
   * Counts a release of each entry of `references` homed in `country` (a party that did not write the
   * person; a reference given n times is n parties' releases), and takes out those every party has
   * now released (COUNT_RELEASES, RELEASE_CLAIMS, one transaction); answers those taken out, with
   * their claim's time.
   */
  async releaseClaims(references: string[], country: string): Promise<PeerEntry[]> {
    if (references.length === 0) return [];
    const rows = await retriedOnDeadlock(() =>
      this.entries.manager.transaction(async (manager) => {
        const counted = await COUNT_RELEASES.rows(manager, [references, country]);
        const released = counted.filter((row) => row.released).map((row) => row.reference);
        return released.length === 0 ? [] : RELEASE_CLAIMS.rows(manager, [released]);
      }),
    );
    return rows.map((row) => ({ reference: row.reference, homeCountry: country, status: 'active', recordedAt: row.recorded_at }));
  }

  /** A peer's released claims: the copies held of exactly those claims deleted; never an entry homed in `here`. */
  async releasePeerClaims(claims: PeerEntry[], here: string): Promise<void> {
    if (claims.length === 0) return;
    await retriedOnDeadlock(() =>
      RELEASE_PEER_CLAIMS.run(this.entries.manager, [claims.map((claim) => claim.reference), claims.map((claim) => claim.homeCountry), claims.map((claim) => claim.recordedAt), here]),
    );
  }

  /** Up to `limit` entries homed in `country`, after the reference `after`, in reference order. */
  async homedIn(country: string, after: string, limit: number): Promise<DirectoryEntry[]> {
    const rows = await HOMED_IN.rows(this.entries.manager, [country, after, limit]);
    return rows.map((row) => entityFromRow(this.entries.metadata, row, new DirectoryEntry()));
  }

  /**
   * Entries a peer has just homed, merged by the same rule as `mergeFromPeer` (committed without
   * waiting for the flush, see MERGE_AND_ANSWER), and what the directory holds for each of their
   * references then, one entry per reference.
   */
  async mergeAndAnswer(rows: PeerEntry[]): Promise<PeerEntry[]> {
    if (rows.length === 0) return [];
    const unique = earliestOfEach(rows);
    const answered = await retriedOnDeadlock(() => MERGE_AND_ANSWER.rows(this.entries.manager, mergeParameters(unique)));
    const held = new Map<string, PeerEntry>(
      answered.map((row) => [row.reference, { reference: row.reference, homeCountry: row.home_country, status: row.status, recordedAt: row.recorded_at }]),
    );
    const unread = unique.filter((row) => !held.has(row.reference));
    for (const entry of await this.findMany(unread.map((row) => row.reference))) held.set(entry.reference.trim(), { ...entry, reference: entry.reference.trim() });
    return unique.map((row) => held.get(row.reference) ?? row);
  }
}

/** An entry as peers exchange it. */
export type PeerEntry = Pick<DirectoryEntry, 'reference' | 'homeCountry' | 'status' | 'recordedAt'>;

/**
 * One row per reference for a statement (ON CONFLICT cannot touch a row twice): the earliest
 * claim, and of the same claim the row that arrived last (a later status of it).
 */
function earliestOfEach(rows: PeerEntry[]): PeerEntry[] {
  const byReference = new Map<string, PeerEntry>();
  for (const row of rows) {
    const seen = byReference.get(row.reference);
    if (!seen || !claimPrecedes(seen, row)) byReference.set(row.reference, row);
  }
  return [...byReference.values()];
}

/** MERGE's four array parameters, one row per reference (earliestOfEach). */
function mergeParameters(rows: PeerEntry[]): [string[], string[], string[], Date[]] {
  const unique = earliestOfEach(rows);
  return [unique.map((row) => row.reference), unique.map((row) => row.homeCountry), unique.map((row) => row.status), unique.map((row) => row.recordedAt)];
}
