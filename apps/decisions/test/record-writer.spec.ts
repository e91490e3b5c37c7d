import 'reflect-metadata';
import { FlowVersion } from '../src/flows/flow-version.entity';
import { FlowsRepository, StaleFlowVersion } from '../src/flows/flows.repository';
import { BatchResult, CheckedRow, ImportBatch, KnownPerson } from '../src/records/import-batch';
import { RecordWriter, VersionNotInForce } from '../src/records/record-writer';

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
 * known; and when it looks them up first (`lookUpFirst`): only after a batch whose people were all
 * recorded already. The batch and the flows are stand-ins: what is checked is what the writer asks them.
 */
describe('RecordWriter: the claim first after a batch of new people', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_writer', version: 1, applicationId: 'tp_us_writer' });
  const flows = remembering(flow);
  /** The order of every lookup-and-claim (`claim first`, `look up first` or `both at once`), and who the stand-in directory knows. */
  const asked: string[] = [];
  const recordedHere = new Set<string>();
  const batch = {
    releaseUnwrittenClaims: async () => undefined,
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>, options: { claimFirst?: boolean; lookUpFirst?: boolean } = {}) => {
      expect(options.claimFirst && options.lookUpFirst).toBeFalsy();
      asked.push(options.claimFirst ? 'claim first' : options.lookUpFirst ? 'look up first' : 'both at once');
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

  it('claims first only while the last batch was all new people, and looks up first only while it was all returning people', async () => {
    await write('first@example.com'); // nothing known about the last batch yet: both at once
    await write('second@example.com'); // the last was all new: the claim first
    await write('first@example.com'); // claimed first, but everyone was known: the next looks up first
    await write('third@example.com'); // looked up first, and everyone was new: the next claims first
    await write('fourth@example.com');
    await write('first@example.com');
    await write('second@example.com'); // looked up first, everyone known: again
    await write('fifth@example.com');
    expect(asked).toEqual(['both at once', 'claim first', 'claim first', 'look up first', 'claim first', 'claim first', 'look up first', 'look up first']);
  });

  it('looks up and claims at once after a batch with both new and returning people', async () => {
    asked.length = 0;
    // The first request is a batch alone; the two written while it is on its way are the next batch.
    await Promise.all([write('seventh@example.com'), write('first@example.com'), write('eighth@example.com')]);
    await write('ninth@example.com');
    expect(asked).toEqual(['claim first', 'claim first', 'both at once']);
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
    releaseUnwrittenClaims: async () => undefined,
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

/**
 * A claimed person whose row the write did not record (its key met another request's record) is
 * handed back for release; one the write recorded is not.
 */
describe('RecordWriter: the claims no row wrote', () => {
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_claims', version: 1, applicationId: 'tp_us_claims' });
  const released: Array<{ claimed: string[]; written: string[] }> = [];
  const batch = {
    releaseUnwrittenClaims: async (_: string, claimed: Map<string, string>, written: Set<string>) => {
      released.push({ claimed: [...claimed.keys()].sort(), written: [...written].sort() });
    },
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>) => ({ known: [], claimed: new Map(rows.map((row) => [row.email, `sub_${row.email}`])) }),
    // Each row is recorded for its claimed person, but refused@'s, which is answered another request's record (no record made).
    record: async (_: string, __: unknown, rows: Array<CheckedRow & { index: number }>): Promise<BatchResult> => ({
      ...allRecorded(rows),
      made: new Map(
        rows
          .filter((row) => !row.email.startsWith('refused'))
          .map((row) => [row.index, { recordId: `rec_${row.email}`, subjectId: `sub_${row.email}`, status: 'granted', recordedAt: '2026-11-25T08:00:00.000Z', supersedes: null }]),
      ),
    }),
  } as unknown as ImportBatch;
  const write = writeThrough(new RecordWriter(batch, remembering(flow)), flow);

  it('hands the batch its claims with the people its rows were recorded for, after the write', async () => {
    const first = write('kept@example.com');
    await new Promise((resolve) => setImmediate(resolve));
    // These go in later batches, one of them with the write of the first.
    await Promise.all([first, write('made@example.com'), write('refused@example.com'), write('also@example.com')]);
    // Handed back after the requests are answered (their answers do not wait for it).
    for (let tick = 0; tick < 5; tick++) await new Promise((resolve) => setImmediate(resolve));
    // Every claim is handed back once, with whether its person's row was recorded.
    expect(released.flatMap(({ claimed }) => claimed).sort()).toEqual(['also@example.com', 'kept@example.com', 'made@example.com', 'refused@example.com']);
    const unwritten = released.flatMap(({ claimed, written }) => claimed.filter((email) => !written.includes(`sub_${email}`)));
    expect(unwritten).toEqual(['refused@example.com']);
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
    releaseUnwrittenClaims: async () => undefined,
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

/**
 * A record to be decided by the version in force at its capture (RecordRequest.inForce) is written
 * against the active version only when that version was activated by then, or is the flow's first;
 * else it is refused with VersionNotInForce and nothing of it is written, on the remembered path and
 * on the path that reads the version.
 */
describe('RecordWriter: the version in force at the capture', () => {
  const activatedAt = new Date('2026-06-10T00:00:00.000Z');
  const flow = Object.assign(new FlowVersion(), { id: 'flw_us_inforce', version: 2, applicationId: 'tp_us_inforce', status: 'active', activatedAt });
  const written: string[] = [];
  const batch = {
    knownAndClaimed: async (_: string, rows: Array<{ email: string }>) => ({ known: [], claimed: new Map(rows.map((row) => [row.email, `sub_${row.email}`])) }),
    flowAndKnownPeople: async () => ({ flow, known: [] }),
    record: async (_: string, __: unknown, rows: Array<CheckedRow & { index: number }>): Promise<BatchResult> => {
      written.push(...rows.map((row) => row.email));
      return allRecorded(rows);
    },
  } as unknown as ImportBatch;
  const capturedAt = (at: string, first?: number) => ({ at: Date.parse(at), ...(first !== undefined ? { first } : {}) });
  const writeAt = (writer: RecordWriter, email: string, inForce: { at: number; first?: number }) =>
    writer.write({ applicationId: flow.applicationId, flowId: flow.id, email, inForce, check: () => ({ index: 0, email, purposes: {}, capturedAt: new Date(inForce.at).toISOString(), fingerprint: '' }) });

  for (const [path, flows] of [
    ['remembered', remembering(flow)],
    ['read', { rememberedForRecords: () => undefined, rememberForRecords: () => undefined, forget: () => undefined } as unknown as FlowsRepository],
  ] as const) {
    it(`refuses a record captured before the active version was activated, unless that version is the first (${path})`, async () => {
      written.length = 0;
      const writer = new RecordWriter(batch, flows);
      const answers = await Promise.allSettled([
        writeAt(writer, 'before@example.com', capturedAt('2026-06-09T23:59:59.999Z')),
        writeAt(writer, 'at@example.com', capturedAt('2026-06-10T00:00:00.000Z')),
        writeAt(writer, 'first@example.com', capturedAt('2020-01-01T00:00:00.000Z', 2)),
        writeAt(writer, 'after@example.com', capturedAt('2026-07-01T00:00:00.000Z')),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect((answers[0] as PromiseRejectedResult).reason).toBeInstanceOf(VersionNotInForce);
      expect(written.sort()).toEqual(['after@example.com', 'at@example.com', 'first@example.com']);
    });
  }
});
