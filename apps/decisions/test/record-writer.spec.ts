import 'reflect-metadata';
import { FlowVersion } from '../src/flows/flow-version.entity';
import { FlowsRepository, StaleFlowVersion } from '../src/flows/flows.repository';
import { BatchResult, CheckedRow, ImportBatch, KnownPerson } from '../src/records/import-batch';
import { RecordWriter } from '../src/records/record-writer';

/** What the stand-in ImportBatch.record answers: every row recorded. */
const allRecorded = (rows: Array<CheckedRow & { index: number }>): BatchResult => ({
  outcomes: rows.map((row) => ({ index: row.index, outcome: 'recorded', record_id: `rec_${row.email}` })),
  created: new Set(rows.map((row) => row.index)),
  made: new Map(),
  elsewhere: new Map(),
});

/** Flows that remember `flow` as the active version. */
const remembering = (flow: FlowVersion) => ({ rememberedForRecords: () => flow, forget: () => undefined, rememberForRecords: () => undefined }) as unknown as FlowsRepository;

/** A Record API request for `email` through `writer`, against `flow`. */
const writeThrough = (writer: RecordWriter, flow: FlowVersion) => (email: string) =>
  writer.write({
    applicationId: flow.applicationId,
    flowId: flow.id,
    email,
    check: () => ({ index: 0, email, purposes: {}, capturedAt: '2026-11-25T08:00:00.000Z', fingerprint: '' }),
  });

/**
 * When the writer asks the directory before looking its people up (ImportBatch.knownAndClaimed
 * `claimFirst`): only after a batch whose people were all new, and no longer after one with someone
 * known. The batch and the flows are stand-ins: what is checked is what the writer asks them.
 */
describe('RecordWriter: the claim first after a batch of new people', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_writer', version: 1, applicationId: 'tp_us_writer' });
  const flows = remembering(flow);
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
      return allRecorded(rows);
    },
  } as unknown as ImportBatch;
  const write = writeThrough(new RecordWriter(batch, flows), flow);

  it('claims first only while the last batch was all new people', async () => {
    await write('first@example.com'); // nothing known about the last batch yet: both at once
    await write('second@example.com'); // the last was all new: the claim first
    await write('first@example.com'); // claimed first, but someone known: the next looks up and claims at once
    await write('third@example.com');
    await write('fourth@example.com');
    expect(asked).toEqual([false, true, true, false, true]);
  });
});

/**
 * The two stages: while a batch writes, the next batch's people are looked up and claimed; a third
 * batch waits until that one writes; writes never overlap. Stand-ins whose writes finish only when
 * the test lets them.
 */
describe('RecordWriter: the next batch\'s people stage beside the write', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_stages', version: 1, applicationId: 'tp_us_stages' });
  const flows = remembering(flow);
  const steps: string[] = [];
  const finishWrite: Array<() => void> = [];
  let writing = 0;
  const names = (rows: Array<{ email: string }>) => rows.map((row) => row.email.split('@')[0]).join('+');
  const batch = {
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>) => {
      steps.push(`people ${names(rows)}`);
      return { known: [], claimed: new Map(rows.map((row) => [row.email, `sub_${row.email}`])) };
    },
    record: async (_: string, __: unknown, rows: Array<CheckedRow & { index: number }>): Promise<BatchResult> => {
      writing += 1;
      steps.push(`write ${names(rows)}${writing > 1 ? ' (overlapping)' : ''}`);
      await new Promise<void>((resolve) => finishWrite.push(resolve));
      writing -= 1;
      steps.push(`done ${names(rows)}`);
      return allRecorded(rows);
    },
  } as unknown as ImportBatch;
  const write = writeThrough(new RecordWriter(batch, flows), flow);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const release = async () => {
    finishWrite.shift()!();
    await settle();
  };

  it('looks up and claims the next batch while one writes, one write at a time, in order', async () => {
    const a = write('a@example.com');
    await settle();
    const b = write('b@example.com');
    await settle();
    const [c, d] = [write('c@example.com'), write('d@example.com')];
    await settle();
    // a writes; b's people were found meanwhile; c and d wait for b to write.
    expect(steps).toEqual(['people a', 'write a', 'people b']);
    await release();
    expect(steps).toEqual(['people a', 'write a', 'people b', 'done a', 'write b', 'people c+d']);
    await release();
    await release();
    await Promise.all([a, b, c, d]);
    expect(steps).toEqual(['people a', 'write a', 'people b', 'done a', 'write b', 'people c+d', 'done b', 'write c+d', 'done c+d']);
  });
});

/** A write that fails where nothing expects it answers its own requests with the error, and the writer goes on. */
describe('RecordWriter: a write failing unexpectedly', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_failing', version: 1, applicationId: 'tp_us_failing' });
  let stale = true;
  // The version is found stale once; forgetting it then fails.
  const flows = {
    rememberedForRecords: () => flow,
    rememberForRecords: () => undefined,
    forget: () => {
      throw new Error('the flows cache failed');
    },
  } as unknown as FlowsRepository;
  const batch = {
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>) => ({ known: [], claimed: new Map(rows.map((row) => [row.email, `sub_${row.email}`])) }),
    record: async (_: string, __: unknown, rows: Array<CheckedRow & { index: number }>): Promise<BatchResult> => {
      if (stale) {
        stale = false;
        throw new StaleFlowVersion(flow.id);
      }
      return allRecorded(rows);
    },
  } as unknown as ImportBatch;
  const write = writeThrough(new RecordWriter(batch, flows), flow);

  it('fails the requests of that write with its error, and writes the next batch', async () => {
    await expect(write('first@example.com')).rejects.toThrow('the flows cache failed');
    await expect(write('second@example.com')).resolves.toMatchObject({ created: true, outcome: { outcome: 'recorded', record_id: 'rec_second@example.com' } });
  });
});
