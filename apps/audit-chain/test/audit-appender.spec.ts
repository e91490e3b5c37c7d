import 'reflect-metadata';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { auditChainService } from '../src/audit-chain.service';
import { AuditAppender } from '../src/trail/audit-appender';
import { TrailRepository } from '../src/trail/trail.repository';

/**
 * The sequencer answers each append after its batch commits. A caller that appends again as soon as
 * it is answered (an outbox relay with more rows does) comes back before the batch's drain has
 * settled: that append must still be written, not left waiting for another append to start a drain.
 */
describe('AuditAppender', () => {
  let database: MigratedServiceDatabase;

  beforeAll(async () => {
    database = await migratedServiceDatabase(auditChainService, 'audit_appender');
  });

  afterAll(async () => {
    await database?.close();
  });

  it('writes an append made right after the previous one was answered', async () => {
    const appender = new AuditAppender(database.dataSource, new TrailRepository(database.dataSource));
    const event = (n: number) => ({
      id: `evt_back_to_back_${n}`,
      type: 'consent.granted',
      application_id: 'tp_dev_appenderappender',
      actor: { type: 'participant' as const },
      occurred_at: new Date(Date.UTC(2026, 10, 23, 12, 0, 0, n)).toISOString(),
      payload: { n },
    });
    const leaves: number[] = [];
    for (let n = 0; n < 5; n++) {
      const reply = await appender.append({ source: 'test', events: [event(n)] });
      leaves.push(reply.entries[0].leaf_index);
    }
    expect(leaves).toEqual([0, 1, 2, 3, 4]);
  }, 10_000);
});
