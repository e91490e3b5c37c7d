import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';
import { Subject } from '../src/subjects/subject.entity';
import { SubjectsRepository } from '../src/subjects/subjects.repository';

/**
 * Binding an identifier to a person recorded without it (SubjectsRepository.bind), against the real
 * PostgreSQL: of two binds of the same person at once one wins and the other answers false after
 * waiting for it, and losing to the unique index inside a caller's transaction leaves that
 * transaction usable.
 */
describe('binding an identifier to a recorded person', () => {
  let database: MigratedServiceDatabase;
  let subjects: SubjectsRepository;
  const app = 'tp_us_binding';
  const stored = async (id: string) => (await database.dataSource.getRepository(Subject).findOneByOrFail({ id })) as Pick<Subject, 'email' | 'externalId'>;
  const insert = (id: string, email: string | null, externalId: string | null) =>
    database.dataSource.getRepository(Subject).insert({ id, applicationId: app, email, externalId, createdAt: new Date() });

  beforeAll(async () => {
    database = await migratedServiceDatabase(decisionsService, 'subject_binding', 3);
    subjects = new SubjectsRepository(database.dataSource.getRepository(Subject));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('binds an external id or an address only to a person who has none yet', async () => {
    await insert('sub_us00000000000000000001', 'ada@example.com', null);
    await insert('sub_us00000000000000000002', null, 'crm-bea');
    expect(await subjects.bind(app, 'sub_us00000000000000000001', 'external_id', 'crm-ada')).toBe(true);
    expect(await subjects.bind(app, 'sub_us00000000000000000001', 'external_id', 'crm-other')).toBe(false);
    expect(await subjects.bind(app, 'sub_us00000000000000000002', 'email', 'bea@example.com')).toBe(true);
    expect(await stored('sub_us00000000000000000001')).toMatchObject({ email: 'ada@example.com', externalId: 'crm-ada' });
    expect(await stored('sub_us00000000000000000002')).toMatchObject({ email: 'bea@example.com', externalId: 'crm-bea' });
    // Another person's identifier: refused by the unique index, answered false.
    await insert('sub_us00000000000000000003', 'cy@example.com', null);
    expect(await subjects.bind(app, 'sub_us00000000000000000003', 'external_id', 'crm-ada')).toBe(false);
    expect(await stored('sub_us00000000000000000003')).toMatchObject({ externalId: null });
  });

  it('lets one of two concurrent binds of the same person win; the other waits for it and answers false', async () => {
    await insert('sub_us00000000000000000004', 'dee@example.com', null);
    const first = database.dataSource.createQueryRunner();
    await first.connect();
    try {
      await first.startTransaction();
      expect(await subjects.bind(app, 'sub_us00000000000000000004', 'external_id', 'crm-dee-1', first.manager)).toBe(true);
      let settled = false;
      const second = subjects.bind(app, 'sub_us00000000000000000004', 'external_id', 'crm-dee-2').finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);
      await first.commitTransaction();
      expect(await second).toBe(false);
      expect(await stored('sub_us00000000000000000004')).toMatchObject({ externalId: 'crm-dee-1' });
    } finally {
      if (first.isTransactionActive) await first.rollbackTransaction();
      await first.release();
    }
  });

  it("loses to the unique index inside a caller's transaction without spoiling it", async () => {
    await insert('sub_us00000000000000000005', 'eve@example.com', null);
    await insert('sub_us00000000000000000006', 'fay@example.com', 'crm-fay');
    await database.dataSource.transaction(async (manager) => {
      expect(await subjects.bind(app, 'sub_us00000000000000000005', 'external_id', 'crm-fay', manager)).toBe(false);
      // The transaction still works: another bind in it commits with it.
      expect(await subjects.bind(app, 'sub_us00000000000000000005', 'external_id', 'crm-eve', manager)).toBe(true);
    });
    expect(await stored('sub_us00000000000000000005')).toMatchObject({ externalId: 'crm-eve' });
  });
});
