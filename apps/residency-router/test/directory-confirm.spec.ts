import 'reflect-metadata';
import { createHash } from 'node:crypto';
import {
  DirectoryConfirmReply,
  DirectoryConfirmRequest,
  DirectoryPullReply,
  DirectoryPullRequest,
  DirectorySyncEvent,
  RESIDENCY_DIRECTORY_CONFIRM,
  RESIDENCY_DIRECTORY_PULL,
} from '@dcr/contracts';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient, noResponder, TransportRecord } from '@dcr/transport';
import { defer, Observable, of, throwError } from 'rxjs';
import { DataSource } from 'typeorm';
import { DirectoryEntry } from '../src/directory/directory-entry.entity';
import { DirectoryRepository } from '../src/directory/directory.repository';
import { DirectoryService } from '../src/directory/directory.service';
import { residencyRouterService } from '../src/residency-router.service';

const ref = (label: string) => createHash('sha256').update(label).digest('hex');
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A peer as the transport reaches it: a confirmation or a pull is answered by `other` on a later turn, a sync event applied there. */
interface Peer {
  send(pattern: string, payload: TransportRecord<DirectoryConfirmRequest> | DirectoryPullRequest): Observable<DirectoryConfirmReply | DirectoryPullReply>;
  emit(pattern: string, event: DirectorySyncEvent): Observable<void>;
}

function peerOf(other: () => DirectoryService): Peer {
  return {
    send: (pattern, payload) =>
      defer(async () => {
        await nextTurn();
        if (pattern === RESIDENCY_DIRECTORY_PULL) return other().homedHere(payload as DirectoryPullRequest);
        expect(pattern).toBe(RESIDENCY_DIRECTORY_CONFIRM);
        return { entries: await other().confirmFromPeer((payload as TransportRecord<DirectoryConfirmRequest>).data.entries) };
      }),
    emit: (_, event) =>
      defer(async () => {
        await nextTurn();
        await other().applyFromPeer(event);
      }),
  };
}

function serviceFor(country: string, dataSource: DataSource, peers: Map<string, Peer>, env: Record<string, unknown> = {}): DirectoryService {
  const context = { env: { COUNTRY: country, ...env } } as unknown as ServiceContext;
  const clients = new ServiceClients({} as CountryClient, peers as unknown as Map<string, CountryClient>);
  return new DirectoryService(new DirectoryRepository(dataSource.getRepository(DirectoryEntry)), clients, context);
}

/**
 * Two countries homing the same new person at the same moment (the gap the directory's sync event
 * left open: each homed and recorded the person before the other's event arrived, and the country
 * that lost kept the person's data). Each country now confirms its new entries with its peers
 * before answering, and a peer's merge keeps the earlier claim, so both answer the same home.
 * Two real databases, one per country; the peers reach each other on later turns of the event loop.
 */
describe('DirectoryService: a new person is homed in one country only', () => {
  let usDatabase: MigratedServiceDatabase;
  let deDatabase: MigratedServiceDatabase;
  let us: DirectoryService;
  let de: DirectoryService;

  const directoryOf = async (dataSource: DataSource): Promise<Map<string, string>> =>
    new Map(
      (await dataSource.query(`SELECT rtrim("reference") AS "reference", "home_country" FROM "residency_router"."directory_entries"`)).map(
        (row: { reference: string; home_country: string }) => [row.reference, row.home_country],
      ),
    );
  const homeIn = async (dataSource: DataSource, label: string) => (await directoryOf(dataSource)).get(ref(label));
  /** Until both directories hold the same entries (sync events still on their way), at most about a second. */
  const converged = async () => {
    for (let i = 0; i < 100; i++) {
      const [inUs, inDe] = await Promise.all([directoryOf(usDatabase.dataSource), directoryOf(deDatabase.dataSource)]);
      if (JSON.stringify([...inUs].sort()) === JSON.stringify([...inDe].sort())) return inUs;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the two directories did not converge');
  };

  beforeAll(async () => {
    [usDatabase, deDatabase] = await Promise.all([
      migratedServiceDatabase(residencyRouterService, 'confirm_us', 4),
      migratedServiceDatabase(residencyRouterService, 'confirm_de', 4),
    ]);
    us = serviceFor('US', usDatabase.dataSource, new Map([['DE', peerOf(() => de)]]));
    de = serviceFor('DE', deDatabase.dataSource, new Map([['US', peerOf(() => us)]]));
  });

  afterAll(async () => {
    await Promise.all([usDatabase?.close(), deDatabase?.close()]);
  });

  it('confirms again a person found homed here by a claim made moments ago (another replica\'s, still being confirmed), and yields to a peer\'s earlier claim', async () => {
    // Another US replica has just inserted its claim and is still asking DE, which holds an earlier
    // claim of its own it has not told the US yet. Before, a registration finding the US entry
    // answered "US" at once and its request recorded the person in the US, while the claim it
    // relied on then went to DE: the person was recorded in both countries.
    const insert = (dataSource: DataSource, label: string, country: string, at: string) =>
      dataSource.query(`INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at") VALUES ($1, $2, 'active', ${at}, ${at})`, [ref(label), country]);
    await insert(usDatabase.dataSource, 'replica-claim:email', 'US', 'now()');
    await insert(deDatabase.dataSource, 'replica-claim:email', 'DE', "now() - interval '1 second'");
    const replica = serviceFor('US', usDatabase.dataSource, new Map([['DE', peerOf(() => de)]]));
    expect(await replica.registerMany([{ references: [ref('replica-claim:email')] }])).toEqual(['DE']);
    expect(await homeIn(usDatabase.dataSource, 'replica-claim:email')).toBe('DE');
    // A person homed here by a claim settled long ago is answered at once, and no peer asked.
    // (The DE directory learnt of it long ago too, so that both directories agree for the tests after this one.)
    await insert(usDatabase.dataSource, 'settled-claim:email', 'US', "now() - interval '1 hour'");
    await insert(deDatabase.dataSource, 'settled-claim:email', 'US', "now() - interval '1 hour'");
    const asking = jest.fn(peerOf(() => de).send);
    const quiet = serviceFor('US', usDatabase.dataSource, new Map([['DE', { ...peerOf(() => de), send: asking }]]));
    expect(await quiet.registerMany([{ references: [ref('settled-claim:email')] }])).toEqual(['US']);
    expect(asking).not.toHaveBeenCalled();
  });

  it("answers the peer's country for a person found homed here whose entry another call gave to the peer's earlier claim after this one found it", async () => {
    await usDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at") VALUES ($1, 'US', 'active', now(), now())`,
      [ref('moved:email')],
    );
    // Between this registration's statement (which finds the entry homed here) and its second look,
    // another call's confirmation meets DE's earlier claim of it and rewrites the entry to it.
    const repository = new DirectoryRepository(usDatabase.dataSource.getRepository(DirectoryEntry));
    const findMany = repository.findMany.bind(repository);
    repository.findMany = async (references: string[]) => {
      await usDatabase.dataSource.query(
        `UPDATE "residency_router"."directory_entries" SET "home_country" = 'DE', "recorded_at" = now() - interval '1 second', "updated_at" = now() WHERE "reference" = $1`,
        [ref('moved:email')],
      );
      return findMany(references);
    };
    const context = { env: { COUNTRY: 'US' } } as unknown as ServiceContext;
    const replica = new DirectoryService(repository, new ServiceClients({} as CountryClient, new Map([['DE', peerOf(() => de)]]) as unknown as Map<string, CountryClient>), context);
    // Before, it answered US (the entry it had found), and its request recorded the person here too.
    expect(await replica.registerMany([{ references: [ref('moved:email')] }])).toEqual(['DE']);
    // (DE learns of its own claim, as its confirmation would have left it, for the tests after this one.)
    await deDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at", "updated_at") SELECT "reference", "home_country", "status", "recorded_at", "updated_at" FROM (VALUES ($1::char(64), 'DE', 'active', now() - interval '1 second', now())) v("reference", "home_country", "status", "recorded_at", "updated_at") ON CONFLICT DO NOTHING`,
      [ref('moved:email')],
    );
  });

  it('claims each new person in exactly one of two countries claiming them at once, and both directories agree', async () => {
    const people = Array.from({ length: 40 }, (_, i) => `race-${i}:email`);
    // Each country makes its own id for the person; DE asks in the reverse order.
    const [inUs, inDe] = await Promise.all([
      us.claimNew(people.map((label) => ({ reference: ref(label), minted: [ref(`${label}:us-id`)] }))),
      de.claimNew([...people].reverse().map((label) => ({ reference: ref(label), minted: [ref(`${label}:de-id`)] }))),
    ]);
    const deInOrder = [...inDe].reverse();
    people.forEach((label, i) => expect([label, inUs[i], deInOrder[i]]).toEqual([label, !deInOrder[i], !inUs[i]]));

    const directory = await converged();
    people.forEach((label, i) => {
      const home = inUs[i] ? 'US' : 'DE';
      expect([label, directory.get(ref(label))]).toEqual([label, home]);
      // The winner's made id lives with the person; the loser's too, if the loser had inserted its
      // claim before it learnt of the winner's (else it wrote nothing for them), never anywhere else.
      const [winnerId, loserId] = home === 'US' ? [`${label}:us-id`, `${label}:de-id`] : [`${label}:de-id`, `${label}:us-id`];
      expect([label, directory.get(ref(winnerId))]).toEqual([label, home]);
      expect([undefined, home]).toContain(directory.get(ref(loserId)));
    });
  });

  it('answers the same home in both countries for people of several references registered at once (registerMany)', async () => {
    // Five rounds, so that the countries' statements and confirmations meet in many orders.
    for (let round = 0; round < 5; round++) {
      const people = Array.from({ length: 30 }, (_, i) => ({ references: [ref(`many-${round}-${i}:external`), ref(`many-${round}-${i}:email`)] }));
      const [inUs, inDe] = await Promise.all([us.registerMany(people), de.registerMany(people)]);
      expect([round, inDe]).toEqual([round, inUs]);
      const directory = await converged();
      people.forEach((person, i) => {
        for (const reference of person.references) expect([round, i, directory.get(reference)]).toEqual([round, i, inUs[i]]);
      });
    }
  });

  it('does not home a person whom a peer homed first and whose sync event has not arrived yet', async () => {
    // DE homed them a second ago; US has not heard of it.
    await deDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
       VALUES ($1, 'DE', 'active', now() - interval '1 second'), ($2, 'DE', 'active', now() - interval '1 second')`,
      [ref('late:email'), ref('late-many:email')],
    );
    expect(await us.claimNew([{ reference: ref('late:email'), minted: [ref('late:us-id')] }])).toEqual([false]);
    expect(await us.registerMany([{ references: [ref('late-many:email')], minted: [ref('late-many:us-id')] }])).toEqual(['DE']);
    // US now holds DE's claim, and the id it made went with it.
    expect(await homeIn(usDatabase.dataSource, 'late:email')).toBe('DE');
    expect(await homeIn(usDatabase.dataSource, 'late:us-id')).toBe('DE');
    expect(await homeIn(usDatabase.dataSource, 'late-many:email')).toBe('DE');
    // A later claim of them anywhere finds the entry: nothing is claimed again.
    expect(await us.claimNew([{ reference: ref('late:email'), minted: [] }])).toEqual([false]);
    await converged();
  });

  it('keeps a person homed before where they are when a peer holds an earlier claim of a new reference of theirs, takes that claim, and answers its country', async () => {
    // Homed in US before (both know it); DE holds their external id from someone recorded there (its
    // event lost). The request binding that id to the US person is answered DE: the id names someone
    // there, so it is not kept for this person (before, it was answered US, and the US recorded the
    // id for its person while DE held it for another).
    for (const { dataSource } of [usDatabase, deDatabase]) {
      await dataSource.query(
        `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at") VALUES ($1, 'US', 'active', '2026-11-25T08:00:00Z')`,
        [ref('settled:email')],
      );
    }
    await deDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at") VALUES ($1, 'DE', 'active', now() - interval '1 second')`,
      [ref('settled:external')],
    );
    expect(await us.registerMany([{ references: [ref('settled:email'), ref('settled:external')] }])).toEqual(['DE']);
    expect(await homeIn(usDatabase.dataSource, 'settled:external')).toBe('DE');
    expect(await homeIn(usDatabase.dataSource, 'settled:email')).toBe('US');
    const directory = await converged();
    expect([directory.get(ref('settled:email')), directory.get(ref('settled:external'))]).toEqual(['US', 'DE']);
  });

  it('catches up at start with the entries a peer homed while it was down, a page at a time, and only those', async () => {
    // DE homed five people while US was down (their sync events lost); it also holds a US and an FR claim.
    const missed = Array.from({ length: 5 }, (_, i) => `missed-${i}:email`);
    await deDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at")
       SELECT r, c, 'active', '2026-11-25T08:00:00Z'::timestamptz
         FROM unnest($1::text[] || ARRAY[$2, $3], array_fill('DE'::text, ARRAY[5]) || ARRAY['FR', 'US']) AS a(r, c)`,
      [missed.map(ref), ref('missed:fr'), ref('missed:us')],
    );
    // US homed one of them too, later, while it could not reach DE.
    await usDatabase.dataSource.query(
      `INSERT INTO "residency_router"."directory_entries" ("reference", "home_country", "status", "recorded_at") VALUES ($1, 'US', 'active', '2026-11-25T09:00:00Z')`,
      [ref('missed-0:email')],
    );
    const pages: Array<string | undefined> = [];
    const page = de.homedHere.bind(de);
    const spy = jest.spyOn(de, 'homedHere').mockImplementation((request) => (pages.push(request.after), page(request)));

    await us.catchUp(2);
    spy.mockRestore();
    for (const label of missed) expect([label, await homeIn(usDatabase.dataSource, label)]).toEqual([label, 'DE']);
    expect(await homeIn(usDatabase.dataSource, 'missed:fr')).toBeUndefined();
    expect(await homeIn(usDatabase.dataSource, 'missed:us')).toBeUndefined();
    // Every DE entry of the earlier tests too, two at a time: several pages, each after the last one's end.
    const homedInDe = (await deDatabase.dataSource.query(`SELECT count(*)::int AS n FROM "residency_router"."directory_entries" WHERE "home_country" = 'DE'`))[0].n;
    expect(pages).toHaveLength(Math.floor(homedInDe / 2) + 1);
    expect(pages[0]).toBeUndefined();
    expect(new Set(pages).size).toBe(pages.length);
  });

  it('keeps the plan of the confirmation\'s statement (it scans nothing)', async () => {
    // As for the statement that homes new people (directory-register.spec.ts): six runs on one
    // connection make PostgreSQL settle on its generic plan, which must not read the whole table.
    await deDatabase.dataSource.transaction(async (manager) => {
      const repository = new DirectoryRepository(manager.getRepository(DirectoryEntry));
      for (let i = 0; i < 6; i++) await repository.mergeAndAnswer([{ reference: ref(`plan-${i}:email`), homeCountry: 'US', status: 'active', recordedAt: new Date() }]);
      const [{ 'QUERY PLAN': plan }] = await manager.query(
        `EXPLAIN (FORMAT JSON) EXECUTE "residency_directory_merge_and_answer"('{}'::text[], '{}'::text[], '{}'::text[], '{}'::timestamptz[])`,
      );
      expect(JSON.stringify(plan)).not.toContain('Seq Scan');
      expect(JSON.stringify(plan)).toContain('"Relation Name":"directory_entries"');
    });
  });

  it('answers a confirmation without waiting for its flush, for its own transaction only, and keeps the earlier claim', async () => {
    const runner = deDatabase.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const repository = new DirectoryRepository(runner.manager.getRepository(DirectoryEntry));
      const setting = async () => (await runner.query(`SELECT current_setting('synchronous_commit') AS "value"`))[0].value;
      const claim = (label: string, homeCountry: string, at: string) => ({ reference: ref(label), homeCountry, status: 'active', recordedAt: new Date(at) });
      await runner.startTransaction();
      await repository.mergeAndAnswer([claim('flush:email', 'US', '2026-11-25T10:00:00.000Z')]);
      expect(await setting()).toBe('off');
      await runner.commitTransaction();
      expect(await setting()).toBe('on');
      const held = await repository.mergeAndAnswer([claim('flush:email', 'FR', '2026-11-25T10:00:01.000Z'), claim('flush-later:email', 'FR', '2026-11-25T10:00:01.000Z')]);
      expect(held.map((entry) => [entry.reference, entry.homeCountry, entry.recordedAt.toISOString()])).toEqual([
        [ref('flush:email'), 'US', '2026-11-25T10:00:00.000Z'],
        [ref('flush-later:email'), 'FR', '2026-11-25T10:00:01.000Z'],
      ]);
      expect(await setting()).toBe('on');
    } finally {
      await runner.release();
    }
  });
});

describe('DirectoryService: a peer that does not confirm', () => {
  let database: MigratedServiceDatabase;
  let directory: DirectoryService;
  const asked: string[] = [];
  const synced: DirectorySyncEvent[] = [];

  beforeAll(async () => {
    database = await migratedServiceDatabase(residencyRouterService, 'confirm_silent');
    const silent = {
      send: (pattern: string) => {
        asked.push(pattern);
        return throwError(() => noResponder(`de.${pattern}`));
      },
      emit: (_: string, event: DirectorySyncEvent) => (synced.push(event), of(undefined)),
    };
    directory = serviceFor('US', database.dataSource, new Map([['DE', silent as unknown as Peer]]));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('homes the person here, sends the entries as a sync event instead, and does not ask that peer again for a while', async () => {
    expect(await directory.claimNew([{ reference: ref('alone:email'), minted: [ref('alone:id')] }])).toEqual([true]);
    expect(asked).toEqual([RESIDENCY_DIRECTORY_CONFIRM]);
    expect(synced.flatMap((event) => event.entries.map((entry) => [entry.reference, entry.home_country])).sort()).toEqual(
      [
        [ref('alone:email'), 'US'],
        [ref('alone:id'), 'US'],
      ].sort(),
    );
    expect(await directory.registerMany([{ references: [ref('alone-too:email')] }])).toEqual(['US']);
    expect(asked).toHaveLength(1);
    expect(synced.flatMap((event) => event.entries.map((entry) => entry.reference))).toContain(ref('alone-too:email'));
  });

  it('homes no one and keeps nothing of them with DIRECTORY_CONFIRMATION=required', async () => {
    asked.length = 0;
    synced.length = 0;
    const silent = (directory as unknown as { clients: ServiceClients }).clients.peer('DE') as unknown as Peer;
    const strict = serviceFor('US', database.dataSource, new Map([['DE', silent]]), { DIRECTORY_CONFIRMATION: 'required' });
    const homeOf = async (label: string) =>
      (await database.dataSource.query(`SELECT "home_country" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref(label)]))[0]?.home_country;

    await expect(strict.claimNew([{ reference: ref('strict:email'), minted: [ref('strict:id')] }])).rejects.toMatchObject({ code: 'service_unavailable' });
    expect([await homeOf('strict:email'), await homeOf('strict:id')]).toEqual([undefined, undefined]);
    // Within the pause the peer is not asked again, and the answer is the same.
    await expect(strict.registerMany([{ references: [ref('strict-two:external'), ref('strict-two:email')] }])).rejects.toMatchObject({ code: 'service_unavailable' });
    expect([await homeOf('strict-two:external'), await homeOf('strict-two:email')]).toEqual([undefined, undefined]);
    expect(asked).toEqual([RESIDENCY_DIRECTORY_CONFIRM]);
    expect(synced).toEqual([]);
    // Someone homed before (a claim settled long ago) needs no confirmation: still answered.
    await database.dataSource.query(`UPDATE "residency_router"."directory_entries" SET "recorded_at" = "recorded_at" - interval '1 hour', "updated_at" = "updated_at" - interval '1 hour' WHERE "reference" = $1`, [ref('alone:email')]);
    expect(await strict.registerMany([{ references: [ref('alone:email')] }])).toEqual(['US']);
  });
});
