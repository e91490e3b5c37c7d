import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { DirectorySyncEvent } from '@dcr/contracts';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient } from '@dcr/transport';
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
  const synced: DirectorySyncEvent[] = [];
  const ref = (label: string) => createHash('sha256').update(label).digest('hex');
  const homeOf = async (label: string): Promise<string | undefined> =>
    (await dataSource.query(`SELECT "home_country" FROM "residency_router"."directory_entries" WHERE "reference" = $1`, [ref(label)]))[0]?.home_country;

  beforeAll(async () => {
    database = await migratedServiceDatabase(residencyRouterService, 'register_many');
    dataSource = database.dataSource;
    const peer = { emit: (_: string, event: DirectorySyncEvent) => (synced.push(event), of(undefined)) };
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

  it('answers each home and inserts only the missing references of the people homed here', async () => {
    const homes = await directory.registerMany([
      [ref('new:id'), ref('new:email')], // nobody knows them: here
      [ref('berlin:id'), ref('berlin:email')], // their e-mail lives in DE: there, nothing written here
      [ref('known:id'), ref('known:email')], // their e-mail lives here already: here, the new id added
      [ref('first:id'), ref('first:email'), ref('first:external')], // DE first in their order wins over US
      [ref('twin-a:id'), ref('shared:email')], // two people of one call share a reference: it is inserted once
      [ref('twin-b:id'), ref('shared:email')],
    ]);

    expect(homes).toEqual(['US', 'DE', 'US', 'DE', 'US', 'US']);
    expect(await homeOf('new:id')).toBe('US');
    expect(await homeOf('new:email')).toBe('US');
    expect(await homeOf('berlin:id')).toBeUndefined();
    expect(await homeOf('known:id')).toBe('US');
    expect(await homeOf('first:id')).toBeUndefined();
    expect(await homeOf('shared:email')).toBe('US');
    const sent = synced.flatMap((event) => event.entries);
    expect(sent.map((entry) => entry.reference).sort()).toEqual(
      ['new:id', 'new:email', 'known:id', 'twin-a:id', 'shared:email', 'twin-b:id'].map(ref).sort(),
    );
    expect(new Set(sent.map((entry) => `${entry.home_country}/${entry.status}`))).toEqual(new Set(['US/active']));
  });

  it('sends a large registration to the peers in events of at most 1,000 entries (the contract\'s limit)', async () => {
    synced.length = 0;
    const people = Array.from({ length: 500 }, (_, i) => [ref(`bulk-${i}:id`), ref(`bulk-${i}:email`), ref(`bulk-${i}:external`)]);
    expect(new Set(await directory.registerMany(people))).toEqual(new Set(['US']));
    expect(synced.map((event) => event.entries.length)).toEqual([1000, 500]);
    for (const event of synced) expect(validateSync(plainToInstance(DirectorySyncEvent, event))).toEqual([]);
    expect(new Set(synced.flatMap((event) => event.entries.map((entry) => entry.reference))).size).toBe(1500);
  });

  it('registers one person by the same rule (register)', async () => {
    expect(await directory.register([ref('single:id'), ref('berlin:email')])).toBe('DE');
    expect(await homeOf('single:id')).toBeUndefined();
    expect(await directory.register([ref('single:id'), ref('single:email')])).toBe('US');
    expect(await homeOf('single:email')).toBe('US');
  });

  it('homes people of one reference each (a batch of e-mail addresses) by the same rule', async () => {
    synced.length = 0;
    const homes = await directory.registerMany([
      [ref('solo-a:email')], // new: here
      [ref('berlin:email')], // lives in DE: there
      [ref('known:email')], // lives here already: here, nothing written
      [ref('solo-b:email')], // new, and twice in the call: inserted once
      [ref('solo-b:email')],
    ]);
    expect(homes).toEqual(['US', 'DE', 'US', 'US', 'US']);
    expect(await homeOf('solo-a:email')).toBe('US');
    expect(await homeOf('solo-b:email')).toBe('US');
    expect(await homeOf('berlin:email')).toBe('DE');
    expect(synced.flatMap((event) => event.entries.map((entry) => entry.reference)).sort()).toEqual([ref('solo-a:email'), ref('solo-b:email')].sort());
  });

  it('inserts nothing and tells no peer when everyone is already homed', async () => {
    synced.length = 0;
    expect(await directory.registerMany([[ref('new:id'), ref('new:email')], [ref('berlin:email')]])).toEqual(['US', 'DE']);
    expect(synced).toEqual([]);
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
});
