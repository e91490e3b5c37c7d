import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { DirectorySyncEvent } from '@dcr/contracts';
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

  it('inserts nothing and tells no peer when everyone is already homed', async () => {
    synced.length = 0;
    expect(await directory.registerMany([[ref('new:id'), ref('new:email')], [ref('berlin:email')]])).toEqual(['US', 'DE']);
    expect(synced).toEqual([]);
  });
});
