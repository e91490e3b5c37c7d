import 'reflect-metadata';
import { FLOWS_GET, GATEWAY_APPLICATION_IDENTITY, ReceiptEventInput } from '@dcr/contracts';
import { normaliseFlowTerms } from '@dcr/domain';
import { ServiceClients, ServiceContext } from '@dcr/service-kit';
import { migratedServiceDatabase, MigratedServiceDatabase } from '@dcr/testing';
import { CountryClient } from '@dcr/transport';
import { defer } from 'rxjs';
import { ReceiptFreezer } from '../src/records/receipt-freezer';
import { receiptsService } from '../src/receipts.service';

const APPLICATION_ID = 'tp_dev_0123456789abcdef';
const FLOW_ID = 'flw_dev_fedcba9876543210';
const TERMS = normaliseFlowTerms({
  name: 'Newsletter sign-up',
  pattern: 'standard',
  purposes: ['newsletter'],
  purpose_definitions: { newsletter: { label: 'Send me the newsletter', basis: 'consent', mechanism: 'explicit' } },
  locale: 'en-GB',
  title: 'Stay in touch',
  consent_duration: 'P1Y',
});

/** A Record API decision event for one record. */
function granted(eventId: string, recordId: string): ReceiptEventInput {
  return {
    id: eventId,
    type: 'consent.granted',
    application_id: APPLICATION_ID,
    occurred_at: '2026-11-24T10:00:00.000Z',
    data: {
      kind: 'consent',
      record_id: recordId,
      flow_id: FLOW_ID,
      flow_version: 1,
      subject: { id: 'sub_us0123456789abcdefgh' },
      outcome: 'granted',
      purposes: { newsletter: 'granted' },
      channel: 'controller_attested',
      captured_at: '2026-11-24T09:59:59.000Z',
      recorded_at: '2026-11-24T10:00:00.000Z',
    },
  };
}

/**
 * ReceiptFreezer against the real PostgreSQL: a batch of decision events becomes receipts in one
 * insert, and an event delivered again (a relay that crashed before deleting its outbox rows) freezes
 * nothing new and rewrites nothing.
 */
describe('ReceiptFreezer', () => {
  let database: MigratedServiceDatabase;
  let freezer: ReceiptFreezer;

  beforeAll(async () => {
    database = await migratedServiceDatabase(receiptsService, 'receipt_freezer');
    const own = {
      send: (pattern: string) =>
        defer(async () => {
          if (pattern === FLOWS_GET) return { id: FLOW_ID, version: 1, terms: TERMS };
          if (pattern === GATEWAY_APPLICATION_IDENTITY) return { id: APPLICATION_ID, name: 'Acme' };
          throw new Error(`unexpected ${pattern}`);
        }),
    };
    const context = { env: { COUNTRY: 'US', PUBLIC_BASE_URL: 'http://127.0.0.1:1' } } as unknown as ServiceContext;
    freezer = new ReceiptFreezer(database.dataSource, new ServiceClients(own as unknown as CountryClient, new Map()), context);
    freezer.onModuleInit();
  });

  afterAll(async () => {
    await database?.close();
  });

  const stored = async (recordIds: string[]) =>
    database.dataSource.query(`SELECT "record_id", "source_event_id", "frozen", "frozen_at" FROM "receipts"."receipts" WHERE "record_id" = ANY($1) ORDER BY "record_id"`, [recordIds]);

  it('freezes one receipt per record of a batch, and nothing again for a redelivered event', async () => {
    const first = [granted('evt_aaaaaaaaaaaaaaaaaaa1', 'rec_us_redelivered_1'), granted('evt_aaaaaaaaaaaaaaaaaaa2', 'rec_us_redelivered_2')];
    expect(await freezer.ingest(first)).toEqual({ frozen: 2, lifecycle: 0 });
    const before = await stored(['rec_us_redelivered_1', 'rec_us_redelivered_2']);
    expect(before.map((row: { source_event_id: string }) => row.source_event_id)).toEqual(['evt_aaaaaaaaaaaaaaaaaaa1', 'evt_aaaaaaaaaaaaaaaaaaa2']);
    expect(before[0].frozen.party_identification[0].party_name).toBe('Acme');

    // Delivered again with a new record (the relay's next batch, the first event twice in it): the
    // earlier receipts stay as they were frozen (same time stamp), the new record gets its own.
    const again = [...first, granted('evt_aaaaaaaaaaaaaaaaaaa3', 'rec_us_redelivered_3'), granted('evt_aaaaaaaaaaaaaaaaaaa1', 'rec_us_redelivered_1')];
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await freezer.ingest(again)).toEqual({ frozen: 1, lifecycle: 0 });
    const after = await stored(['rec_us_redelivered_1', 'rec_us_redelivered_2', 'rec_us_redelivered_3']);
    expect(after.slice(0, 2)).toEqual(before);
    expect(after[2]).toMatchObject({ record_id: 'rec_us_redelivered_3', source_event_id: 'evt_aaaaaaaaaaaaaaaaaaa3' });
  });

  it('records a batch\'s withdrawals together: the whole record, or each purpose named, with its channel, and nothing again when redelivered', async () => {
    const withdrawal = (eventId: string, type: string, recordId: string, data: Record<string, unknown> = {}): ReceiptEventInput => ({
      id: eventId,
      type,
      application_id: APPLICATION_ID,
      occurred_at: '2026-11-25T10:00:00.000Z',
      data: { record_id: recordId, flow_id: FLOW_ID, subject: { id: 'sub_us0123456789abcdefgh' }, ...data },
    });
    const events = [
      withdrawal('evt_bbbbbbbbbbbbbbbbbbb1', 'consent.revoked', 'rec_us_withdrawn_1'),
      withdrawal('evt_bbbbbbbbbbbbbbbbbbb2', 'consent.purpose_revoked', 'rec_us_withdrawn_2', { purposes: ['newsletter', 'analytics'], channel: 'newer_record' }),
      granted('evt_bbbbbbbbbbbbbbbbbbb3', 'rec_us_withdrawn_3'),
    ];
    expect(await freezer.ingest(events)).toEqual({ frozen: 1, lifecycle: 3 });
    const facts = await database.dataSource.query(
      `SELECT "source_event_id", "record_id", "fact" FROM "receipts"."lifecycle_facts" WHERE "record_id" LIKE 'rec_us_withdrawn_%' ORDER BY "source_event_id"`,
    );
    expect(facts).toEqual([
      // No channel stated (a hosted session revoked with its token): none recorded, never guessed.
      { source_event_id: 'evt_bbbbbbbbbbbbbbbbbbb1', record_id: 'rec_us_withdrawn_1', fact: { kind: 'withdrawal', at: '2026-11-25T10:00:00.000Z' } },
      { source_event_id: 'evt_bbbbbbbbbbbbbbbbbbb2', record_id: 'rec_us_withdrawn_2', fact: { kind: 'withdrawal', at: '2026-11-25T10:00:00.000Z', channel: 'newer_record', purposeId: 'newsletter' } },
      { source_event_id: 'evt_bbbbbbbbbbbbbbbbbbb2:2', record_id: 'rec_us_withdrawn_2', fact: { kind: 'withdrawal', at: '2026-11-25T10:00:00.000Z', channel: 'newer_record', purposeId: 'analytics' } },
    ]);
    // The relay's next batch carries one of them again (and twice): nothing is added.
    expect(await freezer.ingest([events[1], events[1]])).toEqual({ frozen: 0, lifecycle: 0 });
  });

  it('records what a newer record objects to as objection facts, after what it withdrew, and nothing again when redelivered', async () => {
    const event = (eventId: string, type: string, recordId: string, data: Record<string, unknown>): ReceiptEventInput => ({
      id: eventId,
      type,
      application_id: APPLICATION_ID,
      occurred_at: '2026-11-26T10:00:00.000Z',
      data: { record_id: recordId, flow_id: FLOW_ID, subject: { id: 'sub_us0123456789abcdefgh' }, channel: 'newer_record', ...data },
    });
    const events = [
      // A consent withdrawn and the legitimate interest the record let stand objected to.
      event('evt_ccccccccccccccccccc1', 'consent.revoked', 'rec_us_objected_1', {
        purposes: { newsletter: 'withdrawn', fraud: 'objected' },
        withdrawn: ['newsletter'],
        objected: ['fraud'],
        scope: 'purpose',
      }),
      // Only an objection: nothing withdrawn.
      event('evt_ccccccccccccccccccc2', 'consent.purpose_revoked', 'rec_us_objected_2', { purposes: { newsletter: 'granted', fraud: 'objected' }, withdrawn: [], objected: ['fraud'] }),
    ];
    expect(await freezer.ingest(events)).toEqual({ frozen: 0, lifecycle: 3 });
    const facts = await database.dataSource.query(
      `SELECT "source_event_id", "record_id", "fact" FROM "receipts"."lifecycle_facts" WHERE "record_id" LIKE 'rec_us_objected_%' ORDER BY "source_event_id"`,
    );
    expect(facts).toEqual([
      { source_event_id: 'evt_ccccccccccccccccccc1', record_id: 'rec_us_objected_1', fact: { kind: 'withdrawal', at: '2026-11-26T10:00:00.000Z', channel: 'newer_record', purposeId: 'newsletter' } },
      { source_event_id: 'evt_ccccccccccccccccccc1:2', record_id: 'rec_us_objected_1', fact: { kind: 'objection', at: '2026-11-26T10:00:00.000Z', channel: 'newer_record', purposeId: 'fraud' } },
      { source_event_id: 'evt_ccccccccccccccccccc2', record_id: 'rec_us_objected_2', fact: { kind: 'objection', at: '2026-11-26T10:00:00.000Z', channel: 'newer_record', purposeId: 'fraud' } },
    ]);
    expect(await freezer.ingest(events)).toEqual({ frozen: 0, lifecycle: 0 });
  });
});
