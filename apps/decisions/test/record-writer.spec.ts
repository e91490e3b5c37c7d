import 'reflect-metadata';
import { FlowVersion } from '../src/flows/flow-version.entity';
import { FlowsRepository } from '../src/flows/flows.repository';
import { BatchResult, CheckedRow, ImportBatch, KnownPerson } from '../src/records/import-batch';
import { RecordWriter } from '../src/records/record-writer';

/**
 * When the writer asks the directory before looking its people up (ImportBatch.knownAndClaimed
 * `claimFirst`): only after a batch whose people were all new, and no longer after one with someone
 * known. The batch and the flows are stand-ins: what is checked is what the writer asks them.
 */
describe('RecordWriter: the claim first after a batch of new people', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_writer', version: 1, applicationId: 'tp_us_writer' });
  const flows = { rememberedForRecords: () => flow, forget: () => undefined, rememberForRecords: () => undefined } as unknown as FlowsRepository;
  /** The `claimFirst` of every lookup-and-claim, and who the stand-in directory knows. */
  const asked: boolean[] = [];
  const recordedHere = new Set<string>();
  const batch = {
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>, options: { claimFirst?: boolean } = {}) => {
      asked.push(options.claimFirst ?? false);
      const known: KnownPerson[] = rows.filter((row) => recordedHere.has(row.email)).map((row) => ({ id: `sub_${row.email}`, email: row.email, external_id: null }));
      const claimed = new Map(rows.filter((row) => !recordedHere.has(row.email)).map((row) => [row.email, `sub_${row.email}`]));
      return { known, claimed };
    },
    record: async (_: string, __: unknown, rows: Array<CheckedRow & { index: number }>): Promise<BatchResult> => {
      for (const row of rows) recordedHere.add(row.email);
      return {
        outcomes: rows.map((row) => ({ index: row.index, outcome: 'recorded', record_id: `rec_${row.email}` })),
        created: new Set(rows.map((row) => row.index)),
        made: new Map(),
        elsewhere: new Map(),
      };
    },
  } as unknown as ImportBatch;
  const writer = new RecordWriter(batch, flows);
  const write = (email: string) =>
    writer.write({
      applicationId: flow.applicationId,
      flowId: flow.id,
      email,
      check: () => ({ index: 0, email, purposes: {}, capturedAt: '2026-11-25T08:00:00.000Z', fingerprint: '' }),
    });

  it('claims first only while the last batch was all new people', async () => {
    await write('first@example.com'); // nothing known about the last batch yet: both at once
    await write('second@example.com'); // the last was all new: the claim first
    await write('first@example.com'); // claimed first, but someone known: the next looks up and claims at once
    await write('third@example.com');
    await write('fourth@example.com');
    expect(asked).toEqual([false, true, true, false, true]);
  });
});
