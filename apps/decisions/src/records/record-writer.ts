import { Injectable, Logger } from '@nestjs/common';
import { ImportRowOutcome } from '@dcr/contracts';
import { validationFailed } from '@dcr/domain';
import { FlowVersion } from '../flows/flow-version.entity';
import { FlowsRepository, StaleFlowVersion } from '../flows/flows.repository';
import { CheckedRow, EarlierKey, ImportBatch, KnownPerson, Latest, MadeRecord } from './import-batch';

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
  /**
   * A record pinning no version that is to be decided against the version in force at its capture
   * time `at` (ms; RecordConsent): the active version decides it only if it was activated by then,
   * or is the flow's `first` activated version; else the request is refused with VersionNotInForce
   * (a newer version was activated since the caller chose), and the caller chooses again.
   */
  inForce?: { at: number; first?: number };
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

/** How a batch's people are found (ImportBatch.record), and whether its flow version was remembered. */
interface WriteOptions {
  known?: KnownPerson[];
  claimed?: Map<string, string>;
  whileActive?: boolean;
  /** The batch's idempotency keys used before, read with its people (a row tried again alone reads them afresh). */
  earlier?: Map<string, EarlierKey>;
  /** The known people's newest records of the flow, read with them (checked by the write; a row tried again alone reads them afresh). */
  latest?: Map<string, Latest | null>;
  /** Which of the known people have a standing consent given on the hosted pages in the flow, read with them (the write takes back from it). */
  hosted?: Set<string>;
}

/**
 * A record pinning no version met an active version activated after its capture time
 * (RecordRequest.inForce): nothing was written; its version is to be chosen again.
 */
export class VersionNotInForce extends Error {
  constructor(readonly flowId: string, readonly version: number) {
    super(`Version ${version} of flow ${flowId} is active, activated after the record's capture time`);
  }
}

/** The requests of `group` that `flow` may decide (RecordRequest.inForce); the others are refused with VersionNotInForce. */
function inForceUnder(flow: FlowVersion, group: Pending[]): Pending[] {
  const activatedAt = flow.activatedAt ? new Date(flow.activatedAt).getTime() : undefined;
  return group.filter((pending) => {
    const { inForce } = pending.request;
    if (!inForce || flow.version === inForce.first || (activatedAt !== undefined && activatedAt <= inForce.at)) return true;
    pending.reject(new VersionNotInForce(flow.id, flow.version));
    return false;
  });
}

/** Each request checked against `flow` by the capture rules: those that pass, and those refused with why. */
function checkEach(flow: FlowVersion, group: Pending[]): { checked: Checked[]; refused: Array<{ pending: Pending; error: unknown }> } {
  const checked: Checked[] = [];
  const refused: Array<{ pending: Pending; error: unknown }> = [];
  for (const pending of group) {
    try {
      checked.push({ pending, row: pending.request.check(flow) });
    } catch (error) {
      refused.push({ pending, error });
    }
  }
  return { checked, refused };
}

/** A group's write, prepared: its people found and claimed, what is left to do is the transaction. */
type PreparedWrite = () => Promise<void>;
const UNIQUE_VIOLATION = '23505';
/** The most rows one batch takes (the import chunk size). */
const MAX_BATCH = 500;

/**
 * Group commit for the Record API: the records that arrive while earlier ones are being written go
 * to the database together, in one transaction per application and flow version (ImportBatch: one
 * directory round for the new people, array inserts, one commit), instead of a transaction each.
 * The first batch of a flow reads its version and the people already recorded in one statement
 * (ImportBatch.flowAndKnownPeople), then registers its new people, then writes: three round trips
 * one after another. Later batches check their rows against the version remembered from it
 * (FlowsRepository.rememberedForRecords), look their people up while the directory claims the new
 * ones (ImportBatch.knownAndClaimed: two round trips at once; for a batch with idempotency keys
 * the claim follows the lookup, so that no request refused for its key has its person claimed),
 * and write under the condition that the version is still active (a superseded one writes nothing,
 * and the rows go the first way): two round trips, three with keys (docs/performance.md,
 * nineteenth and twentieth sessions). The lookup also reads each known person's newest record of
 * the flow, which the write checks instead of reading it again (ImportBatch.record `latest`), so a
 * batch of people recorded before (returning people) costs a lookup, then one statement without
 * locks, which the database's refusal of a second successor keeps from forking a chain
 * (thirty-second session). A request alone is written at once, so nothing
 * waits on a timer; under load the batches grow by themselves. When a batch of several fails, each
 * of its rows is tried again alone, so one bad row (or a lost race with another batch) fails only
 * its own request.
 *
 * Two stages, one batch in each (`pump`): while a batch writes, the next one's people are looked
 * up and claimed (`prepare`), so a batch's cycle is the longer of the two instead of their sum.
 * Writes stay one at a time, in order. A batch prepared while the one before it writes cannot see
 * what that one is writing: a person in both is found by neither lookup nor claim and is recorded
 * through the transaction that meets their new row; a key in both meets the other's record as a
 * unique violation and is answered from it (writeAlone), as for two replicas. One write at a time:
 * with two, the batches were half as large for the same rate and PostgreSQL spent more CPU per
 * record (docs/performance.md, sixteenth session); the people stage beside it gained 5-17 % at 8
 * clients and nothing measurable at 16 or 32 (twenty-ninth session).
 */
@Injectable()
export class RecordWriter {
  private readonly logger = new Logger(RecordWriter.name);
  private readonly queue: Pending[] = [];
  /**
   * Whether the last batch written against a remembered version was all new people: the next one
   * is then claimed before its people are looked up (ImportBatch.knownAndClaimed `claimFirst`),
   * and the lookup is left out when the directory homes everyone. A form whose people are mostly
   * new (a sign-up) saves a statement per batch; a batch with someone known costs a round trip
   * more, and the batch after it looks up and claims at once again.
   */
  private lastAllNew = false;
  /**
   * Whether the last batch written against a remembered version had everyone recorded already:
   * the next one looks its people up first and claims only those it does not find
   * (ImportBatch.knownAndClaimed `lookUpFirst`), so returning people cost the directory nothing.
   */
  private lastAllKnown = false;

  constructor(
    private readonly batch: ImportBatch,
    private readonly flows: FlowsRepository,
  ) {}

  write(request: RecordRequest): Promise<WrittenRow> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  /** A batch's people stage is running (at most one). */
  private preparing = false;
  /** A batch whose people stage is done, waiting for the write in progress. */
  private prepared: PreparedWrite[] | undefined;
  /** A batch is writing (at most one). */
  private writing = false;

  /** Starts the next batch's people stage when none is running or waiting, and a prepared batch's write when none is running. */
  private pump(): void {
    if (!this.preparing && this.prepared === undefined && this.queue.length > 0) {
      const taken = this.queue.splice(0, MAX_BATCH);
      this.preparing = true;
      void this.prepare(taken)
        .then(
          (writes) => {
            this.prepared = writes;
          },
          // Nothing of a batch whose people stage failed is written; each request hears why.
          (error: unknown) => {
            for (const pending of taken) pending.reject(error);
          },
        )
        .finally(() => {
          this.preparing = false;
          this.pump();
        });
    }
    if (!this.writing && this.prepared !== undefined) {
      const writes = this.prepared;
      this.prepared = undefined;
      this.writing = true;
      void Promise.all(writes.map((write) => write())).finally(() => {
        this.writing = false;
        this.pump();
      });
      // The people stage just left free takes the next batch.
      this.pump();
    }
  }

  /**
   * A batch's people stage, group by group (one per application and flow version): for a version
   * remembered from an earlier batch, the capture rules and the people's lookup and claim, leaving
   * the write; any other group (a pinned version, external ids, a refusal, the first batch of a
   * flow) is left whole to its write (writeGroup).
   */
  private async prepare(taken: Pending[]): Promise<PreparedWrite[]> {
    const groups = new Map<string, Pending[]>();
    for (const pending of taken) {
      const { applicationId, flowId, flowVersion } = pending.request;
      const key = `${applicationId}\n${flowId}\n${flowVersion ?? 'active'}`;
      const group = groups.get(key);
      if (group) group.push(pending);
      else groups.set(key, [pending]);
    }
    // A write that fails unexpectedly fails its own group's requests (those already answered keep their answers).
    const guarded =
      (group: Pending[], write: PreparedWrite): PreparedWrite =>
      async () => {
        try {
          await write();
        } catch (error) {
          for (const pending of group) pending.reject(error);
        }
      };
    return Promise.all(
      [...groups.values()].map(async (group): Promise<PreparedWrite> => {
        const { applicationId, flowId, flowVersion } = group[0].request;
        const remembered = flowVersion === undefined ? this.flows.rememberedForRecords(flowId) : undefined;
        if (!remembered || remembered.applicationId !== applicationId || !group.every((pending) => pending.request.externalId === undefined)) return guarded(group, () => this.writeGroup(group));
        // Records captured before the remembered version was activated are not its to decide.
        const decided = inForceUnder(remembered, group);
        if (decided.length === 0) return async () => undefined;
        const { checked, refused } = checkEach(remembered, decided);
        if (refused.length > 0) return guarded(decided, () => this.writeGroup(decided));
        let people: { known: KnownPerson[]; claimed: Map<string, string>; earlier?: Map<string, EarlierKey>; latest?: Map<string, Latest | null>; hosted?: Set<string> };
        try {
          people = await this.batch.knownAndClaimed(applicationId, checked.map((one) => one.row), { claimFirst: this.lastAllNew, lookUpFirst: this.lastAllKnown, flowId });
          const emails = new Set(checked.map((one) => one.row.email));
          this.lastAllNew = people.earlier === undefined && people.known.length === 0 && people.claimed.size === emails.size;
          this.lastAllKnown = people.earlier === undefined && people.claimed.size === 0 && new Set(people.known.map((person) => person.email)).size === emails.size;
        } catch (error) {
          for (const one of checked) one.pending.reject(error);
          return async () => undefined;
        }
        // Written while the version is still active; rows found stale are written again against the
        // version read now, and the people the directory homed keep their ids.
        // The people each answered request was recorded for, so that the claims no row wrote are released after.
        const written = new Set<string>();
        for (const one of checked) {
          const resolve = one.pending.resolve;
          one.pending.resolve = (row) => {
            if (row.made) written.add(row.made.subjectId);
            resolve(row);
          };
        }
        return guarded(decided, async () => {
          try {
            const stale = await this.writeChecked(remembered, checked, { ...people, whileActive: true });
            if (stale.length === 0) return;
            this.flows.forget(flowId);
            await this.writeGroup(
              stale.map((one) => one.pending),
              people.claimed,
            );
          } finally {
            // A row refused after its person was claimed (its key met another request's record, a
            // conflict the write found) leaves a claim no one wrote: released, so the address names no
            // one here (a failed write released its own already, and took them out of `claimed`).
            // Best effort, and never in place of the write's own error.
            await this.batch.releaseUnwrittenClaims(applicationId, people.claimed, written).catch((error: unknown) => {
              this.logger.warn(`the directory claims of requests no row wrote were not released (${String(error)}); they stay homed here`);
            });
          }
        });
      }),
    );
  }

  /**
   * A group written the first way: its flow version read now with the people already recorded (a
   * pinned version, external ids, a refusal by the capture rules, which is answered only from a
   * version read just now, the first batch of a flow, or rows found stale against a remembered
   * version, whose people the directory homed keep the ids in `claimed`).
   */
  private async writeGroup(group: Pending[], claimed?: Map<string, string>): Promise<void> {
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
    if (flowVersion === undefined) this.flows.rememberForRecords(flow);
    const { checked, refused } = checkEach(flow, flowVersion === undefined ? inForceUnder(flow, group) : group);
    for (const { pending, error } of refused) pending.reject(error);
    if (checked.length === 0) return;
    await this.writeChecked(flow, checked, { known, claimed });
  }

  /**
   * Writes checked rows together. When a batch of several fails, each of its rows is tried again
   * alone, so one bad row (or a lost race with another batch) fails only its own request. Answers
   * the rows that were not written because the (remembered) version is no longer active.
   */
  private async writeChecked(flow: FlowVersion, checked: Checked[], options: WriteOptions): Promise<Checked[]> {
    try {
      await this.writeTogether(flow, checked, options);
      return [];
    } catch (error) {
      if (error instanceof StaleFlowVersion) return checked;
      if (checked.length === 1) return this.writeAlone(flow, checked[0], error, options);
      this.logger.debug(`a batch of ${checked.length} records failed (${(error as Error).message}); writing them one by one`);
      const stale: Checked[] = [];
      // Alone, a row looks its person up afresh (`known` dropped); the people the directory homed
      // for this batch keep the ids they were homed under.
      const alone: WriteOptions = { claimed: options.claimed, whileActive: options.whileActive };
      for (const one of checked) {
        try {
          await this.writeTogether(flow, [one], alone);
        } catch (single) {
          stale.push(...(single instanceof StaleFlowVersion ? [one] : await this.writeAlone(flow, one, single, alone)));
        }
      }
      return stale;
    }
  }

  /**
   * A row whose write failed. When another batch committed the same idempotency key first (a
   * unique violation), one more try finds that record and answers it; anything else is the error.
   */
  private async writeAlone(flow: FlowVersion, one: Checked, error: unknown, options: WriteOptions): Promise<Checked[]> {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION || !one.row.idempotencyKey) {
      one.pending.reject(error);
      return [];
    }
    try {
      await this.writeTogether(flow, [one], { claimed: options.claimed, whileActive: options.whileActive });
    } catch (again) {
      if (again instanceof StaleFlowVersion) return [one];
      one.pending.reject(again);
    }
    return [];
  }

  /** `options`: what was found of the rows' people and keys (ImportBatch.record looks up what is left out). */
  private async writeTogether(flow: FlowVersion, checked: Checked[], options: WriteOptions): Promise<void> {
    const rows = checked.map((one, index) => ({ ...one.row, index }));
    const consentDuration = (flow.terms as { consent_duration?: unknown } | undefined)?.consent_duration;
    const result = await this.batch.record(flow.applicationId, { id: flow.id, version: flow.version, consentDuration }, rows, options.known, {
      claimed: options.claimed,
      whileActive: options.whileActive,
      earlier: options.earlier,
      latest: options.latest,
      hosted: options.hosted,
    });
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
