import { Injectable, Logger } from '@nestjs/common';
import { ImportRowOutcome } from '@dcr/contracts';
import { validationFailed } from '@dcr/domain';
import { FlowVersion } from '../flows/flow-version.entity';
import { CheckedRow, ImportBatch, KnownPerson, MadeRecord } from './import-batch';

/** What became of one request written through the writer. */
export interface WrittenRow {
  outcome: ImportRowOutcome;
  /** A new record (false: the answer of an earlier request with the same idempotency key). */
  created: boolean;
  made?: MadeRecord;
  /** Refused because the person is homed in this other country. */
  homeCountry?: string;
  /** The flow version it was recorded against. */
  flow: FlowVersion;
  /** The row as checked against that version. */
  row: CheckedRow;
}

/** A record to write: which flow (the active version unless pinned), and its check against the terms. */
export interface RecordRequest {
  applicationId: string;
  flowId: string;
  flowVersion?: number;
  /** The person as the request names them (the row `check` answers repeats them). */
  email: string;
  externalId?: string;
  /** The capture rules for this request against the flow version; throws to refuse it. */
  check: (flow: FlowVersion) => CheckedRow;
}

interface Pending {
  request: RecordRequest;
  resolve: (written: WrittenRow) => void;
  reject: (error: unknown) => void;
}

interface Checked {
  pending: Pending;
  row: CheckedRow;
}

/**
 * At most this many batches write at once; what arrives meanwhile waits for the next batch. One:
 * with two, the batches were half as large (about 9 records instead of 14 at 32 connections) for
 * the same rate, and PostgreSQL spent 0.42 instead of 0.34-0.36 ms of CPU per record on their
 * statements and commits (docs/performance.md, sixteenth session).
 */
const BATCHES_IN_FLIGHT = 1;
const UNIQUE_VIOLATION = '23505';
/** The most rows one batch takes (the import chunk size). */
const MAX_BATCH = 500;

/**
 * Group commit for the Record API: the records that arrive while earlier ones are being written go
 * to the database together, in one transaction per application and flow version (ImportBatch: one
 * directory round for the new people, array inserts, one commit), instead of a transaction each,
 * and the flow version and the people already recorded are looked up once for them, in one
 * statement (ImportBatch.flowAndKnownPeople). A request alone is written at once, so nothing
 * waits on a timer; under load the batches grow by themselves. When a batch of several fails, each
 * of its rows is tried again alone, so one bad row (or a lost race with another batch) fails only
 * its own request.
 */
@Injectable()
export class RecordWriter {
  private readonly logger = new Logger(RecordWriter.name);
  private readonly queue: Pending[] = [];
  private inFlight = 0;

  constructor(private readonly batch: ImportBatch) {}

  write(request: RecordRequest): Promise<WrittenRow> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < BATCHES_IN_FLIGHT && this.queue.length > 0) {
      const taken = this.queue.splice(0, MAX_BATCH);
      this.inFlight += 1;
      void this.flush(taken).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async flush(taken: Pending[]): Promise<void> {
    const groups = new Map<string, Pending[]>();
    for (const pending of taken) {
      const { applicationId, flowId, flowVersion } = pending.request;
      const key = `${applicationId}\n${flowId}\n${flowVersion ?? 'active'}`;
      const group = groups.get(key);
      if (group) group.push(pending);
      else groups.set(key, [pending]);
    }
    await Promise.all([...groups.values()].map((group) => this.writeGroup(group)));
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    const { applicationId, flowId, flowVersion } = group[0].request;
    // The flow version and the people already recorded, in one round trip: the people are known
    // from the requests before the capture rules check them against the version.
    let flow: FlowVersion | null;
    let known: KnownPerson[];
    try {
      const emails = [...new Set(group.map((pending) => pending.request.email))];
      const externalIds = [...new Set(group.flatMap((pending) => (pending.request.externalId ? [pending.request.externalId] : [])))];
      ({ flow, known } = await this.batch.flowAndKnownPeople(applicationId, { id: flowId, ...(flowVersion ? { version: flowVersion } : {}) }, emails, externalIds));
    } catch (error) {
      for (const pending of group) pending.reject(error);
      return;
    }
    if (!flow || flow.applicationId !== applicationId) {
      for (const pending of group) pending.reject(validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]));
      return;
    }
    const checked: Checked[] = [];
    for (const pending of group) {
      try {
        checked.push({ pending, row: pending.request.check(flow) });
      } catch (error) {
        pending.reject(error);
      }
    }
    if (checked.length === 0) return;
    try {
      await this.writeTogether(flow, checked, known);
    } catch (error) {
      if (checked.length === 1) return this.writeAlone(flow, checked[0], error);
      this.logger.debug(`a batch of ${checked.length} records failed (${(error as Error).message}); writing them one by one`);
      for (const one of checked) {
        await this.writeTogether(flow, [one]).catch((single) => this.writeAlone(flow, one, single));
      }
    }
  }

  /**
   * A row whose write failed. When another batch committed the same idempotency key first (a
   * unique violation), one more try finds that record and answers it; anything else is the error.
   */
  private async writeAlone(flow: FlowVersion, one: Checked, error: unknown): Promise<void> {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION || !one.row.idempotencyKey) return one.pending.reject(error);
    await this.writeTogether(flow, [one]).catch((again) => one.pending.reject(again));
  }

  /** `known`: the people found with the flow version; a row tried again alone looks its person up afresh. */
  private async writeTogether(flow: FlowVersion, checked: Checked[], known?: KnownPerson[]): Promise<void> {
    const rows = checked.map((one, index) => ({ ...one.row, index }));
    const result = await this.batch.record(flow.applicationId, { id: flow.id, version: flow.version }, rows, known);
    checked.forEach((one, index) =>
      one.pending.resolve({
        outcome: result.outcomes[index],
        created: result.created.has(index),
        made: result.made.get(index),
        homeCountry: result.elsewhere.get(index),
        flow,
        row: one.row,
      }),
    );
  }
}
