import 'reflect-metadata';
import {
  ClaimNewRequest,
  LocateManyRequest,
  RegisterManyRequest,
  ReleaseRequest,
  RESIDENCY_CLAIM_NEW,
  RESIDENCY_LOCATE_MANY,
  RESIDENCY_REGISTER_MANY,
  RESIDENCY_RELEASE,
} from '@dcr/contracts';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient } from '@dcr/transport';
import { defer } from 'rxjs';
import { DataSource } from 'typeorm';
import { decisionsService } from '../src/decisions.service';
import { OutboxRelay } from '../src/outbox/outbox';
import { CheckedRow, ImportBatch } from '../src/records/import-batch';
import { SubjectsService } from '../src/subjects/subjects.service';

/**
 * A batch (Record API, imports) that gives a person found by one identifier the other one, against
 * the real PostgreSQL, when another writer commits an identifier for the same person, or gives the
 * same identifier to someone else, between the batch's lookup and its write: the batch's bind is
 * void, so its row is decided again against what the other writer recorded (refused as the same row
 * sent after it is, or recorded for the person who now has the identifier), no record is written
 * for a refused row, and the directory entry the batch made for an identifier nobody holds is
 * released.
 */
describe('ImportBatch: a bind that loses a race', () => {
  const applicationId = 'tp_us_bind_races';
  const flow = { id: 'flw_us_bind_races', version: 1 };
  let database: MigratedServiceDatabase;
  let dataSource: DataSource;
  let batch: ImportBatch;
  /** Runs while the batch asks the directory to register references: another writer's commit. */
  let meanwhile: (() => Promise<unknown>) | undefined;
  /** The directory: reference → home country, and the references released. */
  const directory = new Map<string, string>();
  const released: string[] = [];
  /** References a peer country claimed before the batch registered them, and that country. */
  const peerClaims = new Map<string, string>();
  const ref = (kind: 'email' | 'external_id', value: string) => `${kind}:${value}`;

  const row = (index: number, email: string, externalId?: string): CheckedRow => ({
    index,
    email,
    ...(externalId ? { externalId } : {}),
    purposes: { newsletter: { status: 'granted', basis: 'consent' } },
    capturedAt: '2026-11-23T10:00:00.000Z',
    fingerprint: '',
    channel: 'controller_attested',
  });
  const insertPerson = (id: string, email: string | null, externalId: string | null) =>
    dataSource.query(`INSERT INTO "decisions"."subjects" ("id", "application_id", "email", "external_id", "created_at") VALUES ($1, $2, $3, $4, now())`, [id, applicationId, email, externalId]);
  const person = async (id: string) => (await dataSource.query(`SELECT "email", "external_id" FROM "decisions"."subjects" WHERE "id" = $1`, [id]))[0];
  const recordsOf = async (id: string) => (await dataSource.query(`SELECT count(*)::int AS n FROM "decisions"."consent_records" WHERE "subject_id" = $1`, [id]))[0].n as number;

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'record_binding_races');
    dataSource = database.dataSource;
    const own = {
      send: (pattern: string, request: unknown) =>
        defer(async () => {
          if (pattern === RESIDENCY_CLAIM_NEW) return { claimed: (request as ClaimNewRequest).subjects.map(() => true) };
          if (pattern === RESIDENCY_LOCATE_MANY) return { homes: (request as LocateManyRequest).people.map(({ references }) => directory.get(references[0]) ?? null) };
          if (pattern === RESIDENCY_RELEASE) {
            for (const reference of (request as ReleaseRequest).references) {
              released.push(reference);
              directory.delete(reference);
            }
            return { released: (request as ReleaseRequest).references.length };
          }
          if (pattern !== RESIDENCY_REGISTER_MANY) throw new Error(`unexpected ${pattern}`);
          const run = meanwhile;
          meanwhile = undefined;
          await run?.();
          return {
            home_countries: (request as RegisterManyRequest).subjects.map(({ references }) => {
              // A reference a peer claimed first (the directory answers the peer's country for the person).
              const claimedByPeer = references.find((reference) => peerClaims.has(reference));
              if (claimedByPeer) return peerClaims.get(claimedByPeer)!;
              for (const reference of references) if (!directory.has(reference)) directory.set(reference, 'US');
              return 'US';
            }),
          };
        }),
    };
    const context = { env: { COUNTRY: 'US' } } as unknown as ServiceContext;
    // As SubjectsService makes them: the external id's reference first.
    const subjects = {
      newPersonReferences: (_: string, by: { email?: string; externalId?: string }) => ({
        references: [...(by.externalId ? [ref('external_id', by.externalId)] : []), ...(by.email ? [ref('email', by.email)] : [])],
      }),
    } as unknown as SubjectsService;
    const relay = { kick: () => undefined } as unknown as OutboxRelay;
    batch = new ImportBatch(dataSource, subjects, new ServiceClients(own as unknown as CountryClient, new Map()), relay, context);
  });

  beforeEach(() => {
    released.length = 0;
    meanwhile = undefined;
  });

  afterAll(async () => {
    await database?.close();
  });

  it('decides each row of a batch as if the rows before it were recorded: an identifier an earlier row gives a person is theirs for the rows after it', async () => {
    // Recorded before: a person by address alone, and one by external id alone.
    await insertPerson('sub_usrowsaddressonly0000', 'rows-address@example.com', null);
    await insertPerson('sub_usrowsidonly000000000', null, 'rows-id');
    const result = await batch.record(applicationId, flow, [
      row(0, 'rows-new@example.com', 'rows-x'),
      row(1, 'rows-new@example.com', 'rows-y'),
      row(2, 'rows-other@example.com', 'rows-x'),
      row(3, 'rows-address@example.com', 'rows-z'),
      row(4, 'rows-address@example.com', 'rows-w'),
      row(5, 'rows-first@example.com', 'rows-id'),
      row(6, 'rows-second@example.com', 'rows-id'),
    ]);
    const reasons = result.outcomes.map((outcome) => (outcome.outcome === 'refused' ? outcome.reasons : outcome.outcome));
    expect(reasons).toEqual([
      'recorded',
      // The person row 0 introduces has rows-x.
      [{ field: 'subject.external_id', reason: 'an earlier row gives the person of this e-mail address another external_id' }],
      [{ field: 'subject.external_id', reason: 'an earlier row gives it to a person with another e-mail address' }],
      // Row 3 gives the person recorded by address rows-z.
      'recorded',
      [{ field: 'subject.external_id', reason: 'an earlier row gives the person of this e-mail address another external_id' }],
      // Row 5 gives the person recorded by external id an address.
      'recorded',
      [{ field: 'subject.external_id', reason: 'an earlier row gives the person of this external_id another e-mail address' }],
    ]);
    expect(await person('sub_usrowsaddressonly0000')).toEqual({ email: 'rows-address@example.com', external_id: 'rows-z' });
    expect(await person('sub_usrowsidonly000000000')).toEqual({ email: 'rows-first@example.com', external_id: 'rows-id' });
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" IN ('rows-new@example.com', 'rows-other@example.com', 'rows-second@example.com')`);
    expect(n).toBe(1);
  });

  it("refuses an external id whose registration a peer country's earlier claim took (someone there has it), and keeps nothing of it here", async () => {
    await insertPerson('sub_usbindrace00000000010', 'gil@example.com', null);
    directory.set(ref('email', 'gil@example.com'), 'US');
    // Not homed anywhere when the batch looks it up; claimed first in DE by the time the batch registers it.
    peerClaims.set(ref('external_id', 'crm-gil-de'), 'DE');
    try {
      const result = await batch.record(applicationId, flow, [row(0, 'gil@example.com', 'crm-gil-de'), row(1, 'gil-friend@example.com')]);
      expect(result.outcomes[0]).toEqual({ index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to another person of this application' }] });
      expect(result.outcomes[1]).toMatchObject({ outcome: 'recorded' });
      expect(await person('sub_usbindrace00000000010')).toEqual({ email: 'gil@example.com', external_id: null });
      expect(await recordsOf('sub_usbindrace00000000010')).toBe(0);
    } finally {
      peerClaims.clear();
    }
  });

  it('refuses an external id for a person another writer gave another one meanwhile, writes nothing for the row and releases its directory entry', async () => {
    await insertPerson('sub_usbindrace00000000001', 'ada@example.com', null);
    directory.set(ref('email', 'ada@example.com'), 'US');
    meanwhile = () => dataSource.query(`UPDATE "decisions"."subjects" SET "external_id" = 'crm-ada-other' WHERE "id" = 'sub_usbindrace00000000001'`);

    const result = await batch.record(applicationId, flow, [row(0, 'ada@example.com', 'crm-ada-mine'), row(1, 'ada-friend@example.com')]);

    expect(result.outcomes[0]).toEqual({ index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }] });
    expect(result.outcomes[1]).toMatchObject({ outcome: 'recorded' });
    expect(await person('sub_usbindrace00000000001')).toEqual({ email: 'ada@example.com', external_id: 'crm-ada-other' });
    expect(await recordsOf('sub_usbindrace00000000001')).toBe(0);
    expect(released).toEqual([ref('external_id', 'crm-ada-mine')]);
    expect(directory.has(ref('external_id', 'crm-ada-mine'))).toBe(false);
    // The companion row's new person was written once, with its record.
    const [friend] = await dataSource.query(`SELECT "id" FROM "decisions"."subjects" WHERE "email" = 'ada-friend@example.com'`);
    expect(await recordsOf(friend.id)).toBe(1);
  });

  it('releases the directory entry of a new person an earlier try registered when the batch decided again does not write them', async () => {
    await insertPerson('sub_usbindrace00000000009', 'flo@example.com', null);
    directory.set(ref('email', 'flo@example.com'), 'US');
    // Another writer gives Flo the external id the batch's new person brings: Flo's bind loses its
    // race, and decided again, the newcomer's external id belongs to Flo.
    meanwhile = () => dataSource.query(`UPDATE "decisions"."subjects" SET "external_id" = 'crm-newcomer' WHERE "id" = 'sub_usbindrace00000000009'`);

    const result = await batch.record(applicationId, flow, [row(0, 'flo@example.com', 'crm-flo-mine'), row(1, 'newcomer@example.com', 'crm-newcomer')]);

    expect(result.outcomes).toEqual([
      { index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'the person recorded with this e-mail address has another external_id' }] },
      { index: 1, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to a person of this application recorded with another e-mail address' }] },
    ]);
    expect(await dataSource.query(`SELECT "id" FROM "decisions"."subjects" WHERE "email" = 'newcomer@example.com'`)).toEqual([]);
    // The newcomer's address names nobody here; the external id names Flo and stays.
    expect(released).toEqual(expect.arrayContaining([ref('external_id', 'crm-flo-mine'), ref('email', 'newcomer@example.com')]));
    expect(released).not.toContain(ref('external_id', 'crm-newcomer'));
    expect(directory.has(ref('email', 'newcomer@example.com'))).toBe(false);
    expect(directory.get(ref('external_id', 'crm-newcomer'))).toBe('US');
  });

  it('refuses an external id another writer gave someone else meanwhile (the unique index), and keeps that person its directory entry', async () => {
    await insertPerson('sub_usbindrace00000000002', 'bea@example.com', null);
    await insertPerson('sub_usbindrace00000000003', 'cy@example.com', null);
    meanwhile = () => dataSource.query(`UPDATE "decisions"."subjects" SET "external_id" = 'crm-shared' WHERE "id" = 'sub_usbindrace00000000003'`);

    const result = await batch.record(applicationId, flow, [row(0, 'bea@example.com', 'crm-shared')]);

    expect(result.outcomes[0]).toEqual({ index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to another person of this application than subject.email' }] });
    expect(await person('sub_usbindrace00000000002')).toEqual({ email: 'bea@example.com', external_id: null });
    expect(await recordsOf('sub_usbindrace00000000002')).toBe(0);
    // Cy holds it: its entry names him.
    expect(released).toEqual([]);
    expect(directory.get(ref('external_id', 'crm-shared'))).toBe('US');
  });

  it('records the row for the person when another writer gave them the same external id meanwhile', async () => {
    await insertPerson('sub_usbindrace00000000004', 'dee@example.com', null);
    meanwhile = () => dataSource.query(`UPDATE "decisions"."subjects" SET "external_id" = 'crm-dee' WHERE "id" = 'sub_usbindrace00000000004'`);

    const result = await batch.record(applicationId, flow, [row(0, 'dee@example.com', 'crm-dee')]);

    expect(result.outcomes[0]).toMatchObject({ outcome: 'recorded' });
    expect(result.made.get(0)!.subjectId).toBe('sub_usbindrace00000000004');
    expect(await recordsOf('sub_usbindrace00000000004')).toBe(1);
    expect(released).toEqual([]);
  });

  it('refuses an address for a person recorded by external id alone whom another writer gave another address meanwhile', async () => {
    await insertPerson('sub_usbindrace00000000005', null, 'crm-eve');
    meanwhile = () => dataSource.query(`UPDATE "decisions"."subjects" SET "email" = 'eve-other@example.com' WHERE "id" = 'sub_usbindrace00000000005'`);

    const result = await batch.record(applicationId, flow, [row(0, 'eve@example.com', 'crm-eve')]);

    expect(result.outcomes[0]).toEqual({ index: 0, outcome: 'refused', reasons: [{ field: 'subject.external_id', reason: 'belongs to a person of this application recorded with another e-mail address' }] });
    expect(await person('sub_usbindrace00000000005')).toEqual({ email: 'eve-other@example.com', external_id: 'crm-eve' });
    expect(await recordsOf('sub_usbindrace00000000005')).toBe(0);
    expect(released).toEqual([ref('email', 'eve@example.com')]);
  });

  it("binds the address of a new person whose external id another writer recorded meanwhile without one, instead of dropping it", async () => {
    meanwhile = () => insertPerson('sub_usbindrace00000000006', null, 'crm-fay');

    const result = await batch.record(applicationId, flow, [row(0, 'fay@example.com', 'crm-fay')]);

    expect(result.outcomes[0]).toMatchObject({ outcome: 'recorded' });
    expect(result.made.get(0)!.subjectId).toBe('sub_usbindrace00000000006');
    expect(await person('sub_usbindrace00000000006')).toEqual({ email: 'fay@example.com', external_id: 'crm-fay' });
    expect((await dataSource.query(`SELECT count(*)::int AS n FROM "decisions"."subjects" WHERE "email" = 'fay@example.com'`))[0].n).toBe(1);
  });
});
