import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { DirectoryConfirmRequest, DirectoryReleaseEvent, DirectorySyncEvent, RESIDENCY_DIRECTORY_CONFIRM, RESIDENCY_DIRECTORY_RELEASE } from '@dcr/contracts';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient, TransportRecord } from '@dcr/transport';
import { of } from 'rxjs';
import { DataSource } from 'typeorm';
import { DirectoryEntry } from '../src/directory/directory-entry.entity';
import { DirectoryRepository } from '../src/directory/directory.repository';
import { DirectoryService } from '../src/directory/directory.service';
import { residencyRouterService } from '../src/residency-router.service';

/**
 * Homing many people at once (the Record API's and imports' residency round) against the real
 * PostgreSQL, in one statement: a person is homed where the first of their references already in the
 * directory lives, else here; only the missing references of the people homed here are inserted,
 * and only those travel to the peers.
 */
describe('DirectoryService.registerMany', () => {
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let directory: DirectoryService;
  // What the peer (DE, holding none of these people) was told: confirmations it answers with the
  // entries as sent, and sync events (only when a confirmation fails).
  const synced: DirectorySyncEvent[] = [];
  const confirmations: DirectoryConfirmRequest[] = [];
  // The claims released here that DE was told of (`directory.release`).
  const releases: DirectoryReleaseEvent[] = [];
  const told = () => [...confirmations, ...synced];
  const forget = () => {
    synced.length = 0;
    confirmations.length = 0;
  };
  const ref = (label: string) => createHash('sha256').update(label).digest('hex');
  const homeOf = async (label: string): Promise<string | undefined> =>
    (await dataSource.query(`SELECT "home_country" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref(label)]))[0]?.home_country;
  /** A person by references that may be known already. */
  const known = (...labels: string[]) => ({ references: labels.map(ref) });
  /** A new person: one reference that may be known, and an id made just now. */
  const made = (label: string, id: string) => ({ references: [ref(label)], minted: [ref(id)] });

  beforeAll(async () => {
    database = await migratedServiceDatabase(residencyRouterService, 'register_many');
    dataSource = database.dataSource;
    const peer = {
      emit: (pattern: string, event: DirectorySyncEvent) => ((pattern === RESIDENCY_DIRECTORY_RELEASE ? releases : synced).push(event), of(undefined)),
      send: (pattern: string, record: TransportRecord<DirectoryConfirmRequest>) => {
        expect(pattern).toBe(RESIDENCY_DIRECTORY_CONFIRM);
        confirmations.push(record.data);
        return of({ entries: record.data.entries });
      },
    };
    const clients = new ServiceClients({} as CountryClient, new Map([['DE', peer as unknown as CountryClient]]));
    const context = { env: { COUNTRY: 'US' } } as unknown as ServiceContext;
    directory = new DirectoryService(new DirectoryRepository(dataSource.getRepository(DirectoryEntry)), clients, context);
    await dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
       VALUES ($1, 'DE', 'active', now()), ($2, 'US', 'active', now()), ($3, 'DE', 'active', now()), ($4, 'US', 'active', now())`,
      [ref('berlin:email'), ref('known:email'), ref('first:email'), ref('first:external')],
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  // The entries of earlier steps as claims settled long ago: a registration confirms again, with the
  // peers, a person it finds homed here only by a claim made moments ago (settleFoundClaims), which
  // directory-confirm.spec.ts tests; here every claim found is an old one.
  beforeEach(async () => {
    await dataSource.query(`UPDATE "residency_router"."directory_entries" SET "recorded_at" = "recorded_at" - interval '1 hour', "updated_at" = "updated_at" - interval '1 hour'`);
  });

  it('answers each home and inserts only the missing references of the people homed here', async () => {
    const homes = await directory.registerMany([
      known('new:id', 'new:email'), // nobody knows them: here
      known('berlin:id', 'berlin:email'), // their e-mail lives in DE: there, nothing written here
      known('known:id', 'known:email'), // their e-mail lives here already: here, the new id added
      known('first:id', 'first:email', 'first:external'), // DE first in their order wins over US
      known('twin-a:id', 'shared:email'), // two people of one call share a reference: it is inserted once
      known('twin-b:id', 'shared:email'),
    ]);

    expect(homes).toEqual(['US', 'DE', 'US', 'DE', 'US', 'US']);
    expect(await homeOf('new:id')).toBe('US');
    expect(await homeOf('new:email')).toBe('US');
    expect(await homeOf('berlin:id')).toBeUndefined();
    expect(await homeOf('known:id')).toBe('US');
    expect(await homeOf('first:id')).toBeUndefined();
    expect(await homeOf('shared:email')).toBe('US');
    const sent = told().flatMap((event) => event.entries);
    expect(sent.map((entry) => entry.reference).sort()).toEqual(
      ['new:id', 'new:email', 'known:id', 'twin-a:id', 'shared:email', 'twin-b:id'].map(ref).sort(),
    );
    expect(new Set(sent.map((entry) => `${entry.home_country}/${entry.status}`))).toEqual(new Set(['US/active']));
  });

  it('answers the other country for a person found homed here by one reference and there by another (an identifier a request binds to them, homed there meanwhile)', async () => {
    await dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
       VALUES ($1, 'US', 'active', now() - interval '1 hour', now() - interval '1 hour'), ($2, 'DE', 'active', now(), now())`,
      [ref('split:email'), ref('split:external')],
    );
    // The person's e-mail address (known here) first, as a bind lists it: before, their home (US) was answered.
    expect(await directory.registerMany([known('split:email', 'split:external'), known('unsplit:email', 'known:email')])).toEqual(['DE', 'US']);
    expect([await homeOf('split:email'), await homeOf('split:external')]).toEqual(['US', 'DE']);
  });

  it('sends a large registration to the peers in events of at most 1,000 entries (the contract\'s limit)', async () => {
    forget();
    const people = Array.from({ length: 500 }, (_, i) => known(`bulk-${i}:id`, `bulk-${i}:email`, `bulk-${i}:external`));
    expect(new Set(await directory.registerMany(people))).toEqual(new Set(['US']));
    expect(confirmations.map((request) => request.entries.length)).toEqual([1000, 500]);
    for (const request of confirmations) expect(validateSync(plainToInstance(DirectoryConfirmRequest, request))).toEqual([]);
    expect(new Set(confirmations.flatMap((request) => request.entries.map((entry) => entry.reference))).size).toBe(1500);
    // Confirmed: no sync event besides.
    expect(synced).toEqual([]);
  });

  it('registers one person by the same rule (register)', async () => {
    expect(await directory.register(known('single:id', 'berlin:email'))).toBe('DE');
    expect(await homeOf('single:id')).toBeUndefined();
    expect(await directory.register(known('single:id', 'single:email'))).toBe('US');
    expect(await homeOf('single:email')).toBe('US');
  });

  it('homes people of one reference each (a batch of e-mail addresses) by the same rule', async () => {
    forget();
    const homes = await directory.registerMany([
      known('solo-a:email'), // new: here
      known('berlin:email'), // lives in DE: there
      known('known:email'), // lives here already: here, nothing written
      known('solo-b:email'), // new, and twice in the call: inserted once
      known('solo-b:email'),
    ]);
    expect(homes).toEqual(['US', 'DE', 'US', 'US', 'US']);
    expect(await homeOf('solo-a:email')).toBe('US');
    expect(await homeOf('solo-b:email')).toBe('US');
    expect(await homeOf('berlin:email')).toBe('DE');
    expect(told().flatMap((event) => event.entries.map((entry) => entry.reference)).sort()).toEqual([ref('solo-a:email'), ref('solo-b:email')].sort());
  });

  it('homes a made reference (a new person\'s id) with its person: inserted only when the person is homed here', async () => {
    forget();
    const homes = await directory.registerMany([
      made('made-new:email', 'made-new:id'), // new: both here
      made('berlin:email', 'made-berlin:id'), // lives in DE: there, the id not written
      made('known:email', 'made-known:id'), // lives here already: here, the id added
      made('made-twin:email', 'made-twin-a:id'), // the same e-mail twice with two ids: both ids here
      made('made-twin:email', 'made-twin-b:id'),
      { references: [ref('made-both:external'), ref('berlin:email')], minted: [ref('made-both:id')] }, // two that may be known: DE wins
      { references: [ref('made-two:external'), ref('made-two:email')], minted: [ref('made-two:id')] }, // two, both new: here
    ]);
    expect(homes).toEqual(['US', 'DE', 'US', 'US', 'US', 'DE', 'US']);
    for (const label of ['made-new:email', 'made-new:id', 'made-known:id', 'made-twin:email', 'made-twin-a:id', 'made-twin-b:id', 'made-two:external', 'made-two:email', 'made-two:id']) {
      expect([label, await homeOf(label)]).toEqual([label, 'US']);
    }
    for (const label of ['made-berlin:id', 'made-both:external', 'made-both:id']) expect([label, await homeOf(label)]).toEqual([label, undefined]);
    expect(await homeOf('berlin:email')).toBe('DE');
    expect(told().flatMap((event) => event.entries.map((entry) => entry.reference)).sort()).toEqual(
      ['made-new:email', 'made-new:id', 'made-known:id', 'made-twin:email', 'made-twin-a:id', 'made-twin-b:id', 'made-two:external', 'made-two:email', 'made-two:id'].map(ref).sort(),
    );
  });

  it('claims only the people no entry knows, each with their made reference, and leaves everyone else alone (claimNew)', async () => {
    forget();
    const claim = (label: string, id: string) => ({ reference: ref(label), minted: [ref(id)] });
    const claimed = await directory.claimNew([
      claim('claim-new:email', 'claim-new:id'), // nobody knows them: homed here, the id with them
      claim('berlin:email', 'claim-berlin:id'), // lives in DE: nothing written, not even the id
      claim('known:email', 'claim-known:id'), // lives here already (recorded here before): nothing written
    ]);

    expect(claimed).toEqual([true, false, false]);
    expect([await homeOf('claim-new:email'), await homeOf('claim-new:id')]).toEqual(['US', 'US']);
    expect([await homeOf('claim-berlin:id'), await homeOf('claim-known:id'), await homeOf('berlin:email')]).toEqual([undefined, undefined, 'DE']);
    expect(told().flatMap((event) => event.entries.map((entry) => entry.reference)).sort()).toEqual([ref('claim-new:email'), ref('claim-new:id')].sort());
    // Claimed twice (a request repeated): the second claim finds the entry and writes nothing.
    forget();
    expect(await directory.claimNew([claim('claim-new:email', 'claim-again:id')])).toEqual([false]);
    expect(await homeOf('claim-again:id')).toBeUndefined();
    expect(told()).toEqual([]);
  });

  /**
   * `register`, started while another writer's insert of `entries` (reference, home country) is not
   * committed: its snapshot does not see them, and an insert of its own waits for that writer's,
   * which commits 200 ms later.
   */
  async function whileInsertedMeanwhile<T>(entries: Array<[string, string]>, register: () => Promise<T>): Promise<T> {
    const other = dataSource.createQueryRunner();
    await other.connect();
    try {
      await other.startTransaction();
      for (const [reference, home] of entries) {
        await other.query(`INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at") VALUES ($1, $2, 'active', now(), now())`, [
          reference,
          home,
        ]);
      }
      const registering = register();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.commitTransaction();
      return await registering;
    } finally {
      await other.release();
    }
  }

  it('answers the home of a person whose references another writer inserted after the statement began (a peer\'s confirmation meanwhile)', async () => {
    // The registration's snapshot does not see the other writer's insert; its insert waits for it and then writes nothing.
    const { homes, inserted } = await whileInsertedMeanwhile(
      [
        [ref('meanwhile:external'), 'DE'],
        [ref('meanwhile:email'), 'DE'],
      ],
      () => new DirectoryRepository(dataSource.getRepository(DirectoryEntry)).registerMany([known('meanwhile:external', 'meanwhile:email')], 'US', new Date()),
    );
    expect([homes.get(0), inserted]).toEqual(['DE', []]);
    expect(await homeOf('meanwhile:email')).toBe('DE');
  });

  it('answers the other country for a new person one of whose references a peer\'s confirmation inserted after the statement began, the other inserted here', async () => {
    // A peer's confirmation of its claim of the external id is not committed when the registration
    // starts: the snapshot finds neither reference, the e-mail address goes in as this country's,
    // the external id's insert waits for the peer's and writes nothing. Before, the person was
    // answered homed here (the one entry inserted) and recorded here with the peer's external id.
    expect(await whileInsertedMeanwhile([[ref('partly:external'), 'DE']], () => directory.registerMany([known('partly:external', 'partly:email')]))).toEqual(['DE']);
    expect(await homeOf('partly:external')).toBe('DE');
  });

  it('relies on a reference of a person found homed here that another writer here inserted after the statement began, so a release of it counts that writer', async () => {
    // The person's e-mail address is homed here; another registration here inserts their external id
    // (not committed when this one starts): this call's insert of it writes nothing. It must still be
    // a party of that entry, or its release after a failed write would take out the entry the other
    // writer's person holds.
    expect(await directory.claimNew([{ reference: ref('found:email'), minted: [] }])).toEqual([true]);
    expect(await whileInsertedMeanwhile([[ref('found:external'), 'US']], () => directory.registerMany([known('found:external', 'found:email')]))).toEqual(['US']);
    expect(await dataSource.query(`SELECT "reliances" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref('found:external')])).toEqual([{ reliances: 1 }]);
    // This call's release (its write failed) leaves the entry the other writer claimed.
    expect(await directory.release([ref('found:external')])).toEqual([]);
    expect(await homeOf('found:external')).toBe('US');
  });

  it('keeps the plan of the statement that homes new people (it scans nothing)', async () => {
    // The named statement's plan is made on the connection that first runs it; six runs on one
    // connection make PostgreSQL settle on its generic plan, which must not read the whole table.
    await dataSource.transaction(async (manager) => {
      for (let i = 0; i < 6; i++) await new DirectoryRepository(manager.getRepository(DirectoryEntry)).registerMany([made(`plan-${i}:email`, `plan-${i}:id`)], 'US', new Date());
      const [{ 'QUERY PLAN': plan }] = await manager.query(
        `EXPLAIN (FORMAT JSON) EXECUTE "residency_directory_insert_new_people"('{}'::text[], '{}'::text[], '{}'::text[], 'US', now())`,
      );
      expect(JSON.stringify(plan)).not.toContain('Seq Scan');
      expect(JSON.stringify(plan)).toContain('"Relation Name":"directory_entries"');
    });
  });

  it('commits a registration without waiting for its flush, for its own transaction only', async () => {
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      const repository = new DirectoryRepository(runner.manager.getRepository(DirectoryEntry));
      const setting = async () => (await runner.query(`SELECT current_setting('synchronous_commit') AS "value"`))[0].value;
      // Inside a transaction the setting holds until it ends ...
      await runner.startTransaction();
      await repository.registerMany([made('flush-a:email', 'flush-a:id')], 'US', new Date());
      expect(await setting()).toBe('off');
      await runner.commitTransaction();
      // ... and a registration on its own (as the service runs it) leaves the connection as it was, by both statements.
      expect(await setting()).toBe('on');
      await repository.registerMany([made('flush-b:email', 'flush-b:id'), known('flush-c:external', 'flush-c:email')], 'US', new Date());
      expect(await setting()).toBe('on');
      expect([await homeOf('flush-a:id'), await homeOf('flush-b:id'), await homeOf('flush-c:external')]).toEqual(['US', 'US', 'US']);
    } finally {
      await runner.release();
    }
  });

  it('inserts nothing and tells no peer when everyone is already homed', async () => {
    forget();
    expect(await directory.registerMany([known('new:id', 'new:email'), known('berlin:email'), made('known:email', 'known:id')])).toEqual(['US', 'DE', 'US']);
    expect(told()).toEqual([]);
  });
  describe('releasing the claims of new people whose write failed', () => {
    const entry = async (label: string) =>
      (await dataSource.query(`SELECT "home_country", "recorded_at" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref(label)]))[0];

    it('takes out a claim no one relied on, here, and tells the peer that very claim', async () => {
      expect(await directory.claimNew([{ reference: ref('release:email'), minted: [] }])).toEqual([true]);
      const { recorded_at: claimedAt } = await entry('release:email');
      await directory.registerMany([known('release:external', 'release:email2')]);
      releases.length = 0;
      expect((await directory.release([ref('release:email'), ref('release:external'), ref('release:email2'), ref('nobody:email')])).sort()).toEqual(
        [ref('release:email'), ref('release:external'), ref('release:email2')].sort(),
      );
      expect([await homeOf('release:email'), await homeOf('release:external'), await homeOf('release:email2')]).toEqual([undefined, undefined, undefined]);
      const told = releases.flatMap((event) => event.entries);
      expect(told.find((one) => one.reference === ref('release:email'))).toEqual({ reference: ref('release:email'), home_country: 'US', status: 'active', recorded_at: claimedAt.toISOString() });
      expect(told).toHaveLength(3);
    });

    it('keeps a claim another registration relied on (it found the person homed here), and entries homed elsewhere', async () => {
      expect(await directory.claimNew([{ reference: ref('relied:email'), minted: [] }])).toEqual([true]);
      // Another request for the same person: the claim is there, so it is answered homed here and writes them.
      expect(await directory.registerMany([known('relied:email')])).toEqual(['US']);
      releases.length = 0;
      expect(await directory.release([ref('relied:email'), ref('berlin:email')])).toEqual([]);
      expect([await homeOf('relied:email'), await homeOf('berlin:email')]).toEqual(['US', 'DE']);
      expect(releases).toEqual([]);
    });

    it('takes out a claim two registrations relied on once the claimant and both have released it (none wrote the person), and tells the peer then', async () => {
      expect(await directory.claimNew([{ reference: ref('crowd:email'), minted: [] }])).toEqual([true]);
      const { recorded_at: claimedAt } = await entry('crowd:email');
      expect(await directory.registerMany([known('crowd:email')])).toEqual(['US']);
      expect(await directory.registerMany([known('crowd:email')])).toEqual(['US']);
      releases.length = 0;
      // The claimant, then the first registration: one party may still write the person.
      expect(await directory.release([ref('crowd:email')])).toEqual([]);
      expect(await directory.release([ref('crowd:email')])).toEqual([]);
      expect(await homeOf('crowd:email')).toBe('US');
      expect(releases).toEqual([]);
      // The last party: it names no one.
      expect(await directory.release([ref('crowd:email')])).toEqual([ref('crowd:email')]);
      expect(await homeOf('crowd:email')).toBeUndefined();
      expect(releases.flatMap((event) => event.entries)).toEqual([{ reference: ref('crowd:email'), home_country: 'US', status: 'active', recorded_at: claimedAt.toISOString() }]);
    });

    it('counts a reference sent n times as n parties\' releases (a request that registered the same person twice), and only the entries homed here', async () => {
      expect(await directory.claimNew([{ reference: ref('twice:email'), minted: [] }])).toEqual([true]);
      // The same request registers the person again (a try decided again): a second party.
      expect(await directory.registerMany([known('twice:email')])).toEqual(['US']);
      releases.length = 0;
      // Both its registrations released in one message: the entry names no one.
      expect(await directory.release([ref('twice:email'), ref('twice:email')])).toEqual([ref('twice:email')]);
      expect(await homeOf('twice:email')).toBeUndefined();
      // Sent twice while three parties hold it (another registration relied on it too): kept.
      expect(await directory.claimNew([{ reference: ref('thrice:email'), minted: [] }])).toEqual([true]);
      expect(await directory.registerMany([known('thrice:email')])).toEqual(['US']);
      expect(await directory.registerMany([known('thrice:email')])).toEqual(['US']);
      expect(await directory.release([ref('thrice:email'), ref('thrice:email')])).toEqual([]);
      expect(await homeOf('thrice:email')).toBe('US');
      expect(await directory.release([ref('thrice:email')])).toEqual([ref('thrice:email')]);
    });

    it('keeps, whatever it is sent, an entry relied on before the directory counted reliances', async () => {
      await dataSource.query(
        `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at")
         VALUES ($1, 'US', 'active', '2026-11-23T10:00:00Z', '2026-11-23T10:00:05Z')`,
        [ref('older:email')],
      );
      for (let i = 0; i < 3; i++) expect(await directory.release([ref('older:email')])).toEqual([]);
      expect(await homeOf('older:email')).toBe('US');
    });

    it('registers again a person whose entry a release took out after the registration found it', async () => {
      expect(await directory.claimNew([{ reference: ref('gone:email'), minted: [] }])).toEqual([true]);
      const releasing = dataSource.createQueryRunner();
      await releasing.connect();
      try {
        // The release's delete is not committed when the registration starts: the registration finds
        // the entry, its mark waits for the delete and then marks nothing.
        await releasing.startTransaction();
        await releasing.query(`DELETE FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref('gone:email')]);
        const registering = new DirectoryRepository(dataSource.getRepository(DirectoryEntry)).registerMany([known('gone:external', 'gone:email')], 'US', new Date());
        await new Promise((resolve) => setTimeout(resolve, 200));
        await releasing.commitTransaction();
        const { homes, inserted } = await registering;
        // Homed here again: the e-mail address's entry inserted anew (its external id's went in the first round).
        expect([homes.get(0) ?? 'US', inserted.sort()]).toEqual(['US', [ref('gone:email'), ref('gone:external')].sort()]);
      } finally {
        await releasing.release();
      }
      expect(await homeOf('gone:email')).toBe('US');
    });

    it("deletes a peer's copy only of the very claim it released, never an entry homed here", async () => {
      await dataSource.query(
        `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
         VALUES ($1, 'DE', 'active', '2026-11-23T10:00:00Z'), ($2, 'DE', 'active', '2026-11-23T10:00:00Z'), ($3, 'US', 'active', '2026-11-23T10:00:00Z')`,
        [ref('theirs:released'), ref('theirs:later'), ref('ours')],
      );
      const claim = (label: string, country: string, at: string) => ({ reference: ref(label), home_country: country, status: 'active' as const, recorded_at: at });
      const event = plainToInstance(DirectoryReleaseEvent, {
        entries: [claim('theirs:released', 'DE', '2026-11-23T10:00:00.000Z'), claim('theirs:later', 'DE', '2026-11-23T10:00:01.000Z'), claim('ours', 'US', '2026-11-23T10:00:00.000Z')],
      });
      expect(validateSync(event)).toEqual([]);
      await directory.releaseFromPeer(event);
      expect([await homeOf('theirs:released'), await homeOf('theirs:later'), await homeOf('ours')]).toEqual([undefined, 'DE', 'US']);
    });
  });
});

describe('DirectoryService.applyFromPeer', () => {
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let directory: DirectoryService;
  const ref = (label: string) => createHash('sha256').update(label).digest('hex');
  const entryOf = async (label: string) =>
    (await dataSource.query(`SELECT "home_country", "status" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref(label)]))[0];
  const event = (entries: Array<[string, string, string, string]>): DirectorySyncEvent => ({
    entries: entries.map(([label, home, status, at]) => ({ reference: ref(label), home_country: home, status: status as never, recorded_at: at })),
  });

  beforeAll(async () => {
    database = await migratedServiceDatabase(residencyRouterService, 'peer_merges');
    dataSource = database.dataSource;
    const context = { env: { COUNTRY: 'US' } } as unknown as ServiceContext;
    directory = new DirectoryService(new DirectoryRepository(dataSource.getRepository(DirectoryEntry)), new ServiceClients({} as CountryClient, new Map()), context);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('applies events that arrive together, each in full: the earliest claim of a reference wins, and a later status of the same claim applies', async () => {
    // The first event is merged at once; the three that arrive meanwhile go together in the next merge.
    await Promise.all([
      directory.applyFromPeer(event([['zero', 'DE', 'active', '2026-11-23T09:59:00.000Z']])),
      directory.applyFromPeer(event([['one', 'DE', 'active', '2026-11-23T10:00:00.000Z'], ['contested', 'FR', 'active', '2026-11-23T10:00:05.000Z']])),
      directory.applyFromPeer(event([['two', 'DE', 'active', '2026-11-23T10:00:01.000Z'], ['contested', 'DE', 'active', '2026-11-23T10:00:02.000Z']])),
      directory.applyFromPeer(event([['one', 'DE', 'erased', '2026-11-23T10:00:00.000Z'], ['contested', 'IT', 'active', '2026-11-23T10:00:09.000Z']])),
    ]);
    expect(await entryOf('zero')).toEqual({ home_country: 'DE', status: 'active' });
    expect(await entryOf('one')).toEqual({ home_country: 'DE', status: 'erased' });
    expect(await entryOf('two')).toEqual({ home_country: 'DE', status: 'active' });
    expect(await entryOf('contested')).toEqual({ home_country: 'DE', status: 'active' });
  });

  it('says loudly when an earlier claim of a peer takes someone homed here (they may have been recorded here)', async () => {
    await dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
       VALUES ($1, 'US', 'active', '2026-11-23T10:00:00Z'), ($2, 'US', 'active', '2026-11-23T10:00:00Z')`,
      [ref('taken'), ref('kept')],
    );
    const warn = jest.spyOn((directory as unknown as { logger: { warn: (message: string) => void } }).logger, 'warn').mockImplementation(() => undefined);
    try {
      await directory.applyFromPeer(event([['kept', 'DE', 'active', '2026-11-23T10:00:01.000Z'], ['elsewhere', 'DE', 'active', '2026-11-23T09:00:00.000Z']]));
      expect(warn).not.toHaveBeenCalled();
      await directory.applyFromPeer(event([['taken', 'DE', 'active', '2026-11-23T09:59:59.000Z'], ['kept', 'DE', 'active', '2026-11-23T10:00:01.000Z']]));
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(/^1 directory entry homed here went to an earlier claim of DE: anything recorded here for that person stays here/);
      expect([await entryOf('taken'), await entryOf('kept')]).toEqual([{ home_country: 'DE', status: 'active' }, { home_country: 'US', status: 'active' }]);
    } finally {
      warn.mockRestore();
    }
  });

});
