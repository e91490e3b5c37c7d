import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  ClaimNewReply,
  ClaimNewRequest,
  DryRunLedger,
  ImportRowOutcome,
  refusedImportRow,
  LocateManyReply,
  LocateManyRequest,
  RESIDENCY_CLAIM_NEW,
  RESIDENCY_LOCATE_MANY,
  RESIDENCY_REGISTER_MANY,
  RESIDENCY_RELEASE,
  RegisterManyReply,
  RegisterManyRequest,
  ReleaseReply,
  ReleaseRequest,
} from '@dcr/contracts';
import {
  ChainLink,
  consentLapsesAt,
  FieldIssue,
  matchSubject,
  newRecordId,
  newSubjectId,
  RecordedPerson,
  RecordedPurpose,
  recordInChain,
  recordStatus,
  WithdrawalMark,
} from '@dcr/domain';
import { entityFromRow, isDeadlock, JsonRecordset, PreparedStatement } from '@dcr/persistence';
import { outboxDocument, OutboxEvent, outboxInsertSql, outboxRow, SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { DataSource, EntityManager } from 'typeorm';
import { FlowVersion } from '../flows/flow-version.entity';
import { recordedVersionSql, StaleFlowVersion, versionStillActiveSql } from '../flows/flows.repository';
import { OutboxRelay } from '../outbox/outbox';
import { standingHostedConsentsSql, withdrawFromHostedConsents } from './hosted-supersession';
import { recordWithdrawalEvent } from './record-withdrawal-events';
import { SubjectsService } from '../subjects/subjects.service';

/** A row that passed the capture rules, on its way to a record. */
export interface CheckedRow {
  index: number;
  email: string;
  externalId?: string;
  purposes: Record<string, RecordedPurpose>;
  capturedAt: string;
  idempotencyKey?: string;
  /** The body's fingerprint, compared with an earlier use of the key; empty for a row without a key. */
  fingerprint: string;
  /** How the decision reached us; imports leave it out (`imported`). */
  channel?: string;
  /** Per purpose: did the attested label match the published wording (goes into the event). */
  wordingVerdict?: Record<string, 'match' | 'drift'>;
  /** The hosted form builder of a `form_platform_webhook` record (goes into the event). */
  collectionPlatform?: string;
  /** The consent field's rendering evidence (`embedded_field*` records; goes into the event). */
  renderingEvidence?: Array<Record<string, unknown>>;
  /** The purposes whose presentation the row stated (statedPresentations; goes into the event for the receipt's presentation_attested). */
  presentationStated?: string[];
}

/** A record a batch made: what its reply needs beyond the row. */
export interface MadeRecord {
  recordId: string;
  subjectId: string;
  status: 'granted' | 'declined';
  recordedAt: string;
  supersedes: string | null;
  /** A row captured before the person's newest record (history): that newer record. */
  supersededBy?: string;
}

/** What a batch did with its rows. */
export interface BatchResult {
  outcomes: ImportRowOutcome[];
  /** Indexes of the rows that made a new record (not a repeat of an earlier key). */
  created: Set<number>;
  /** The records made, by row index. */
  made: Map<number, MadeRecord>;
  /** Rows refused because the person is homed in another country: that country. */
  elsewhere: Map<number, string>;
}

interface Person {
  id: string;
  email: string | null;
  externalId: string | null;
  isNew: boolean;
  /** A person found by e-mail address who has no external id yet, and a row that names one: it is kept for them. */
  bindExternalId?: string;
  /** A person found by external id who has no e-mail address yet (recorded as a subject by id alone): the row's is kept for them. */
  bindEmail?: string;
}

/** A row's person cannot be told apart: its e-mail address and external id name different people. */
type SubjectConflict = FieldIssue;
const isConflict = (value: unknown): value is SubjectConflict => typeof value === 'object' && value !== null && 'reason' in value;

export interface Latest {
  recordId: string;
  /** The flow version it was decided under: a withdrawal from it names that version, not the batch's. */
  flowVersion: number;
  /** Its purposes as decided (purposesInForce reads its withdrawals into them). */
  purposes: Record<string, RecordedPurpose>;
  /** Its withdrawal marks: what a newer record withdraws from it, and what it carries (recordInChain). */
  withdrawals: WithdrawalMark[];
  /** When its decision was made (ms): a row captured before it is history, not a newer decision. */
  capturedAt: number;
  /** When its consent term runs out (ms): a newer decision after that has nothing of it to withdraw. */
  lapsesAt?: number;
  /**
   * When it was recorded, to the microsecond (RECORDED_AT_TEXT), for a record written before the
   * batch; absent for one of the batch's own (its rows are recorded in row order).
   */
  recordedAt?: string;
  /**
   * Its row's version as read (PostgreSQL's `xmin`), for a record read before the batch without
   * locks: any update since (a withdrawal, a hosted consent completed since that touched it, see
   * supersedeOlderDecisions) makes the write without locks fail its check (PREDECESSORS_UNCHANGED).
   */
  rowVersion?: string;
}

/** The flow version a batch is written against; its consent term says when the batch's own records lapse. */
export interface BatchFlow {
  id: string;
  version: number;
  /** The version's `consent_duration` (ISO 8601); without one its consents do not lapse. */
  consentDuration?: unknown;
}

/** When a consent decided at `capturedAt` under a term of `consentDuration` lapses (ms), or undefined without a term. */
function lapseOf(capturedAt: Date | string | number, consentDuration: unknown): number | undefined {
  const at = consentLapsesAt(new Date(capturedAt), consentDuration);
  return at === undefined ? undefined : Date.parse(at);
}

/** A record on its way into a batch's insert. */
interface NewRecord {
  recordId: string;
  person: string;
  row: CheckedRow;
  status: string;
  supersedes: string | null;
  /** When the record it supersedes was recorded, if that one was written before the batch (RECORDED_FROM). */
  after: string | null;
  /** The row's place in the batch (its recorded_at offset). */
  n: number;
  /** Its withdrawal marks (carried, or made by a later row of the same batch): inserted with it. */
  withdrawals: WithdrawalMark[];
}

/** A record of a person's chain in a batch's plan: written before the batch (with its marks then), or one of its own. */
type Link = ChainLink & { flowVersion: number; recordedAt?: string; marksBefore?: number; own?: NewRecord };

/** A record written before the batch as a link of its chain (its marks copied: the plan appends to them). */
const linkOf = (record: Latest): Link => ({ ...record, withdrawals: [...record.withdrawals], marksBefore: record.withdrawals.length });

/**
 * The people with a row decided before their newest record read (`latest`), each with the earliest
 * such row's capture: where those rows go in the chain, and what they carry, needs the records
 * before the newest one (ImportBatch.chains).
 */
function lateFrom(homed: CheckedRow[], people: Map<number, Person | string | SubjectConflict>, latest: Map<string, Latest>): Map<string, string> {
  const from = new Map<string, string>();
  for (const row of homed) {
    const { id } = people.get(row.index) as Person;
    const newest = latest.get(id);
    const capturedAt = Date.parse(row.capturedAt);
    if (newest && capturedAt < newest.capturedAt && !(from.has(id) && Date.parse(from.get(id)!) <= capturedAt)) from.set(id, new Date(capturedAt).toISOString());
  }
  return from;
}

/** What a batch writes, planned before it is written. */
interface Planned {
  recordedAt: string;
  records: NewRecord[];
  events: OutboxEvent[];
  /** The withdrawal marks of records written before the batch that it supersedes (its own records carry theirs). */
  withdrawals: Withdrawal[];
  /** The records made, by row index. */
  made: Map<number, MadeRecord>;
}

/** New people of a batch, as the JSON document their insert reads. */
const PEOPLE_ROWS = new JsonRecordset<Person>([
  { key: 'id', read: (person) => person.id },
  { key: 'email', read: (person) => person.email },
  { key: 'external_id', read: (person) => person.externalId },
]);

/** New records of a batch. */
const RECORD_ROWS = new JsonRecordset<NewRecord>([
  { key: 'id', read: (record) => record.recordId },
  { key: 'subject', read: (record) => record.person },
  { key: 'purposes', read: (record) => record.row.purposes, type: 'jsonb' },
  { key: 'status', read: (record) => record.status },
  { key: 'captured', read: (record) => record.row.capturedAt, type: 'timestamptz' },
  { key: 'key', read: (record) => record.row.idempotencyKey },
  { key: 'fingerprint', read: (record) => (record.row.idempotencyKey ? record.row.fingerprint : null) },
  { key: 'supersedes', read: (record) => record.supersedes },
  { key: 'after', read: (record) => record.after, type: 'timestamptz' },
  { key: 'channel', read: (record) => record.row.channel ?? 'imported' },
  { key: 'n', read: (record) => record.n, type: 'int' },
  { key: 'withdrawals', read: (record) => record.withdrawals, type: 'jsonb' },
]);

/** The withdrawal marks a batch adds to the records it supersedes. */
interface Withdrawal {
  recordId: string;
  marks: WithdrawalMark[];
}

/** A person's newest record of the flow as read before the batch's transaction (null: none). */
const LATEST_READ_ROWS = new JsonRecordset<{ subject: string; latest: string | null }>([
  { key: 'subject', read: (row) => row.subject },
  { key: 'latest', read: (row) => row.latest },
]);

const WITHDRAWAL_ROWS = new JsonRecordset<Withdrawal>([
  { key: 'id', read: (withdrawal) => withdrawal.recordId },
  { key: 'marks', read: (withdrawal) => withdrawal.marks, type: 'jsonb' },
]);

/** The flow version's columns (all null when there is none) and the known people as [id, email, external id]. */
type FlowAndKnownPeopleRow = Record<string, unknown> & { known_people: Array<[string, string | null, string | null]> };

/** A person a batch found already recorded. */
export type KnownPerson = { id: string; email: string | null; external_id: string | null };

/** The known people of a statement that answers them as JSON arrays ([id, email, external id]). */
const knownPeopleFrom = (rows: Array<[string, string | null, string | null]>): KnownPerson[] =>
  rows.map(([id, email, externalId]) => ({ id, email, external_id: externalId }));

/** An idempotency key used before: the record it made (none yet for a key an earlier chunk of a dry run would record), and the fingerprint of that request's body. */
export type EarlierKey = { idempotency_key: string; record_id: string | null; request_fingerprint: string | null };

type KnownPeopleAndEarlierKeysRow = {
  known_people: Array<[string, string | null, string | null]>;
  earlier_keys: Array<[string, string, string | null]>;
};

/**
 * The people already known by e-mail address ($emails) or external id ($externalIds) in an
 * application ($application). Each key is looked up on its own through its unique index (a nested
 * loop over the keys; `LIMIT 1` keeps each lookup a subquery of its own, which PostgreSQL cannot
 * turn into a join). The earlier `application_id = $1 AND (email = ANY($2) OR external_id = ANY($3))`
 * was, on a table not analysed yet (a new deployment's first minute, every benchmark run), planned
 * as a read of every person of the application filtered by the OR: its cost grew with the table
 * (docs/performance.md, sixteenth session). Planned per call all the same: on a table of a page or
 * two, a kept plan could be a sequential scan.
 */
function knownPeopleSql(application: number, emails: number, externalIds?: number): string {
  const byEmail = `SELECT s.* FROM unnest($${emails}::text[]) AS k("email"), LATERAL (
       SELECT "id", "email", "external_id" FROM "decisions"."subjects" WHERE "application_id" = $${application} AND "email" = k."email" LIMIT 1) s`;
  if (externalIds === undefined) return byEmail;
  return `${byEmail}
     UNION ALL
     SELECT s.* FROM unnest($${externalIds}::text[]) AS k("external_id"), LATERAL (
       SELECT "id", "email", "external_id" FROM "decisions"."subjects" WHERE "application_id" = $${application} AND "external_id" = k."external_id" LIMIT 1) s`;
}

/**
 * A record's `recorded_at` as text, to the microsecond and in UTC whatever the session's settings:
 * read with a person's newest record and sent back with the record that supersedes it
 * (RECORDED_FROM), a JavaScript Date would drop the microseconds. Named apart from the column, which
 * the statements also sort by.
 */
const RECORDED_AT_TEXT = `to_char("recorded_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "recorded_exact"`;

/**
 * The consent terms of a flow's versions ($1, $2), for when their records' consents lapse (lapseOf):
 * read once per version (ImportBatch.durations), not with every record, where a subselect detoasted
 * the version's whole terms for each row on the Record API's path.
 */
const VERSION_DURATIONS = `SELECT "version", "terms"->>'consent_duration' AS "consent_duration" FROM "decisions"."flow_versions"
    WHERE "id" = $1 AND "version" = ANY($2::int[])`;

/**
 * A person's ($person) newest record of a flow ($flow): the decision made last (captured_at), then
 * the later recording (ImportBatch.latest reads the same for many people), with its purposes and
 * withdrawal marks (recordInChain reads what is in force from them, and what a newer record carries).
 */
const LATEST_OF_PERSON = (person: string, flow: string) =>
  `SELECT "record_id", "purposes", "withdrawals", "captured_at", "flow_version", ${RECORDED_AT_TEXT}, "xmin"::text AS "row_version" FROM "decisions"."consent_records"
    WHERE "subject_id" = ${person} AND "flow_id" = ${flow} ORDER BY "captured_at" DESC, "recorded_at" DESC, "record_id" DESC LIMIT 1`;

/** The idempotency keys of `$keys` an application ($application) used before, with their records and body fingerprints. */
function earlierKeysSql(application: number, keys: number): string {
  return `SELECT "idempotency_key", "record_id", "request_fingerprint" FROM "decisions"."consent_records"
      WHERE "application_id" = $${application} AND "idempotency_key" = ANY($${keys}::text[])`;
}

/** The flow version ($3, and $4 when pinned, else the newest active one) with the people of `knownPeople` (as JSON). */
function flowAndKnownPeopleSql(knownPeople: string): string {
  return `SELECT f.*, (SELECT COALESCE(json_agg(json_build_array(p."id", p."email", p."external_id")), '[]') FROM (${knownPeople}) p) AS "known_people"
       FROM (SELECT 1) AS "one" LEFT JOIN LATERAL (${recordedVersionSql('$3', '$4')}) f ON true`;
}

const UNIQUE_VIOLATION = '23505';
/** The subjects' unique indexes: a person is one row per application and e-mail or external id. */
const SUBJECT_KEYS = new Set(['UQ_subjects_application_external_id', 'UQ_subjects_application_email']);
const isSubjectConflict = ({ code, constraint }: { code?: string; constraint?: string }) =>
  code === UNIQUE_VIOLATION && constraint !== undefined && SUBJECT_KEYS.has(constraint);

/**
 * The batch's statements, prepared. Every lookup by an array of keys is planned per call
 * (`reusePlan: false`): the tables start empty and grow under the batches (PreparedStatement).
 * Rows travel as JSON documents (JsonRecordset), not as arrays the driver escapes.
 */
const STATEMENTS = {
  earlierKeys: new PreparedStatement<EarlierKey>('decisions_records_earlier_keys', earlierKeysSql(1, 2), { reusePlan: false }),
  knownPeople: new PreparedStatement<KnownPerson>('decisions_records_known_people', knownPeopleSql(1, 2, 3), { reusePlan: false }),
  knownPeopleByEmail: new PreparedStatement<KnownPerson>('decisions_records_known_people_by_email', knownPeopleSql(1, 2), { reusePlan: false }),
  // The same with each person's newest record of the flow ($3), read before the write (RecordWriter),
  // and whether a consent they gave on the hosted pages in the flow stands (hosted-supersession).
  knownPeopleByEmailWithLatest: new PreparedStatement<
    KnownPerson & {
      hosted: boolean;
      latest_record: string | null;
      latest_purposes: Record<string, RecordedPurpose> | null;
      latest_withdrawals: WithdrawalMark[] | null;
      latest_captured: Date | null;
      latest_recorded: string | null;
      latest_version: number | null;
      latest_row_version: string | null;
    }
  >(
    'decisions_records_known_people_by_email_with_latest',
    `SELECT p.*, l."record_id" AS "latest_record", l."purposes" AS "latest_purposes", l."withdrawals" AS "latest_withdrawals", l."captured_at" AS "latest_captured", l."recorded_exact" AS "latest_recorded", l."flow_version" AS "latest_version", l."row_version" AS "latest_row_version",
            EXISTS (${standingHostedConsentsSql('p."id"', '$1', '$3')}) AS "hosted"
       FROM (${knownPeopleSql(1, 2)}) p LEFT JOIN LATERAL (${LATEST_OF_PERSON('p."id"', '$3')}) l ON true`,
    { reusePlan: false },
  ),
  // The same with the idempotency keys of a keyed batch used before ($3), in one round trip.
  knownPeopleAndEarlierKeys: new PreparedStatement<KnownPeopleAndEarlierKeysRow>(
    'decisions_records_known_people_and_earlier_keys',
    `SELECT (SELECT COALESCE(json_agg(json_build_array(p."id", p."email", p."external_id")), '[]') FROM (${knownPeopleSql(1, 2)}) p) AS "known_people",
            (SELECT COALESCE(json_agg(json_build_array(k."idempotency_key", k."record_id", k."request_fingerprint")), '[]') FROM (${earlierKeysSql(1, 3)}) k) AS "earlier_keys"`,
    { reusePlan: false },
  ),
  // The flow version a Record API batch is written against and the batch's people already known, in
  // one round trip; without external ids (the usual Record API batch) the statement has half as
  // much to plan (it is planned on every call, see knownPeopleSql).
  flowAndKnownPeople: new PreparedStatement<FlowAndKnownPeopleRow>('decisions_records_flow_and_known_people', flowAndKnownPeopleSql(knownPeopleSql(1, 2)), {
    reusePlan: false,
  }),
  flowAndKnownPeopleWithExternalIds: new PreparedStatement<FlowAndKnownPeopleRow>(
    'decisions_records_flow_and_known_people_x',
    flowAndKnownPeopleSql(knownPeopleSql(1, 2, 5)),
    { reusePlan: false },
  ),
  insertPeople: new PreparedStatement<{ id: string }>(
    'decisions_records_insert_people',
    `INSERT INTO "decisions"."subjects" ("id", "application_id", "email", "external_id", "created_at")
     SELECT r."id", $1, r."email", r."external_id", now() FROM jsonb_to_recordset($2::jsonb) AS r(${PEOPLE_ROWS.columns})
     ON CONFLICT DO NOTHING RETURNING "id"`,
  ),
  // E-mail addresses kept for people found by external id who had none ($2 ids, $3 addresses): the
  // people given one (a person another writer gave an address meanwhile is not, see bind).
  bindEmails: new PreparedStatement<{ id: string }>(
    'decisions_records_bind_emails',
    `UPDATE "decisions"."subjects" AS s SET "email" = b."email"
       FROM unnest($2::text[], $3::text[]) AS b("id", "email")
      WHERE s."application_id" = $1 AND s."id" = b."id" AND s."email" IS NULL RETURNING s."id"`,
    // Another writer gave the identifier to someone else meanwhile: a race the batch decides again (bind).
    { expected: isSubjectConflict },
  ),
  // External ids kept for people found by e-mail address who had none ($2 ids, $3 external ids): the people given one.
  bindExternalIds: new PreparedStatement<{ id: string }>(
    'decisions_records_bind_external_ids',
    `UPDATE "decisions"."subjects" AS s SET "external_id" = b."external_id"
       FROM unnest($2::text[], $3::text[]) AS b("id", "external_id")
      WHERE s."application_id" = $1 AND s."id" = b."id" AND s."external_id" IS NULL RETURNING s."id"`,
    // Another writer gave the identifier to someone else meanwhile: a race the batch decides again (bind).
    { expected: isSubjectConflict },
  ),
  lock: new PreparedStatement('decisions_records_lock', `SELECT pg_advisory_xact_lock(hashtext(k)) FROM unnest($1::text[]) AS k ORDER BY k`),
  // Each person's newest record of the flow: the decision made last (captured_at), then the later recording.
  latest: new PreparedStatement<ChainRow>(
    'decisions_records_latest',
    `SELECT DISTINCT ON ("subject_id") "subject_id", "record_id", "purposes", "withdrawals", "captured_at", "flow_version", ${RECORDED_AT_TEXT} FROM "decisions"."consent_records"
      WHERE "subject_id" = ANY($1::text[]) AND "flow_id" = $2 ORDER BY "subject_id", "captured_at" DESC, "recorded_at" DESC, "record_id" DESC`,
    { reusePlan: false },
  ),
  // The records of a flow ($1) of people ($2) with a row decided before their newest record (late),
  // from the newest one captured at or before that row's capture ($3, per person) on, in made order:
  // where the row goes in their chain (recordInChain). Read for late rows only.
  chains: new PreparedStatement<ChainRow>(
    'decisions_records_chains',
    `SELECT c.* FROM unnest($2::text[], $3::timestamptz[]) AS x("subject", "from"), LATERAL (
       SELECT "subject_id", "record_id", "purposes", "withdrawals", "captured_at", "recorded_at", "flow_version", ${RECORDED_AT_TEXT} FROM "decisions"."consent_records"
        WHERE "subject_id" = x."subject" AND "flow_id" = $1 AND "captured_at" >= COALESCE((
          SELECT max(p."captured_at") FROM "decisions"."consent_records" p WHERE p."subject_id" = x."subject" AND p."flow_id" = $1 AND p."captured_at" <= x."from"), x."from")) c
      ORDER BY c."subject_id", c."captured_at", c."recorded_at", c."record_id"`,
    { reusePlan: false },
  ),
};

/** A record of a person's chain as the statements read it. */
type ChainRow = {
  subject_id: string;
  record_id: string;
  purposes: Record<string, RecordedPurpose>;
  withdrawals: WithdrawalMark[];
  captured_at: Date;
  recorded_exact: string;
  flow_version: number;
};

/** A chain row as Latest (and a link of the chain: recordInChain), with its version's consent term (`durations`). */
const latestOf = (row: ChainRow, durations: Map<number, string | null>): Latest => ({
  recordId: row.record_id,
  flowVersion: row.flow_version,
  purposes: row.purposes,
  withdrawals: row.withdrawals,
  capturedAt: new Date(row.captured_at).getTime(),
  lapsesAt: lapseOf(row.captured_at, durations.get(row.flow_version)),
  recordedAt: row.recorded_exact,
});

/**
 * Why a row's person cannot be told apart, or nothing: matchSubject's rule (libs/domain, the one
 * the subjects endpoint and every other entry point keep), with what the batch adds to it: the
 * person of the address is given another external id by an earlier row, or the person of the
 * external id another address. `newHere`: the people an earlier row of the batch introduces (they
 * are not recorded yet, which the reasons say).
 */
function subjectConflict(
  row: Pick<CheckedRow, 'email' | 'externalId'>,
  byId: KnownPerson | undefined,
  byAddress: KnownPerson | undefined,
  bindingInBatch: string | undefined,
  newHere: ReadonlySet<string>,
  emailInBatch?: string,
): SubjectConflict | undefined {
  if (!row.externalId) return undefined;
  const conflict = (reason: string): SubjectConflict => ({ field: 'subject.external_id', reason });
  const match = matchSubject({ email: row.email, externalId: row.externalId }, recordedPerson(byId), recordedPerson(byAddress), 'subject.email');
  if (match.kind === 'conflict') {
    if (byId && !byAddress && newHere.has(byId.id)) return conflict('an earlier row gives it to a person with another e-mail address');
    if (!byId && byAddress && newHere.has(byAddress.id)) return conflict('an earlier row gives the person of this e-mail address another external_id');
    return conflict(match.reason);
  }
  if (!byId && bindingInBatch !== undefined && bindingInBatch !== row.externalId) return conflict('an earlier row gives the person of this e-mail address another external_id');
  if (byId && !byAddress && byId.email === null && emailInBatch !== undefined && emailInBatch !== row.email) {
    return conflict('an earlier row gives the person of this external_id another e-mail address');
  }
  return undefined;
}

const recordedPerson = (person: KnownPerson | undefined): RecordedPerson | null => (person ? { id: person.id, email: person.email, externalId: person.external_id } : null);

/**
 * A row's person: one already recorded (`found`, with an external id to keep for them), one an
 * earlier row of the batch introduced or this row introduces (`newcomer`: the same object for every
 * row of that person, with the external id the rows give them), or a conflict.
 */
type PersonMatch = { found: KnownPerson; bindExternalId?: string; bindEmail?: string } | { newcomer: KnownPerson } | SubjectConflict;

/**
 * Each row's person, in row order, by subjectConflict's rules: the people already recorded
 * (`known`), and the people earlier rows of the batch introduce, who count as known to the rows
 * after them, so a batch decides as the same rows sent one by one would. An external id a row gives
 * a person who has none (recorded, or new in the batch) is kept for them, and a later row giving
 * them another, or giving it to someone else, conflicts.
 */
function matchPeople(rows: CheckedRow[], known: KnownPerson[]): Map<number, PersonMatch> {
  const byExternal = new Map(known.filter((s) => s.external_id).map((s) => [s.external_id!, s]));
  const byEmail = new Map(known.filter((s) => s.email).map((s) => [s.email!, s]));
  /** External ids rows give recorded people who have none (kept for them by the write), by person id. */
  const binding = new Map<string, string>();
  /** E-mail addresses rows give recorded people who have none (found by external id), by person id. */
  const emailBinding = new Map<string, string>();
  /** The people earlier rows introduce, under ids of their own here (made when they are written). */
  const newHere = new Set<string>();
  const matches = new Map<number, PersonMatch>();
  for (const row of rows) {
    const byId = row.externalId ? byExternal.get(row.externalId) : undefined;
    const byAddress = byEmail.get(row.email);
    const conflict = subjectConflict(row, byId, byAddress, byAddress ? binding.get(byAddress.id) : undefined, newHere, byId ? emailBinding.get(byId.id) : undefined);
    if (conflict) {
      matches.set(row.index, conflict);
      continue;
    }
    let person = byId ?? byAddress;
    if (!person) {
      person = { id: `new ${newHere.size}`, email: row.email, external_id: row.externalId ?? null };
      newHere.add(person.id);
      byEmail.set(row.email, person);
      if (row.externalId) byExternal.set(row.externalId, person);
    } else if (row.externalId && !person.external_id && !binding.has(person.id)) {
      // The first external id given to a person without one: theirs from now on.
      if (newHere.has(person.id)) person.external_id = row.externalId;
      else binding.set(person.id, row.externalId);
      byExternal.set(row.externalId, person);
    } else if (person.email === null && !emailBinding.has(person.id)) {
      // The first address given to a person recorded by external id alone: theirs from now on, so
      // the address names them (here, and in the directory) and not a second person.
      emailBinding.set(person.id, row.email);
      byEmail.set(row.email, person);
    }
    if (newHere.has(person.id)) matches.set(row.index, { newcomer: person });
    else {
      const bindExternalId = binding.get(person.id);
      const bindEmail = emailBinding.get(person.id);
      matches.set(row.index, { found: person, ...(bindExternalId ? { bindExternalId } : {}), ...(bindEmail ? { bindEmail } : {}) });
    }
  }
  return matches;
}

const refusal = (row: CheckedRow, reasons: FieldIssue[]): ImportRowOutcome => refusedImportRow(row.index, reasons);
const KEY_REUSED: FieldIssue = { field: 'idempotency_key', reason: 'already used with a different body' };

/**
 * The rows by idempotency key: a key used before (`earlier`) answers its record for the same body and
 * is refused for another (into `outcomes`); a key repeated in the rows is left to its first row
 * (settleRepeatedKeys); the rest are `fresh`.
 */
function sortByKey(rows: CheckedRow[], earlier: Map<string, EarlierKey>, outcomes: Map<number, ImportRowOutcome>): { fresh: CheckedRow[]; firstOfKey: Map<string, CheckedRow> } {
  const fresh: CheckedRow[] = [];
  const firstOfKey = new Map<string, CheckedRow>();
  for (const row of rows) {
    const key = row.idempotencyKey;
    const before = key ? earlier.get(key) : undefined;
    if (before) {
      outcomes.set(
        row.index,
        before.request_fingerprint === row.fingerprint
          ? { index: row.index, outcome: 'recorded', ...(before.record_id ? { record_id: before.record_id } : {}), replayed: true }
          : refusal(row, [KEY_REUSED]),
      );
      continue;
    }
    if (key && firstOfKey.has(key)) continue; // settled after the first row of that key
    if (key) firstOfKey.set(key, row);
    fresh.push(row);
  }
  return { fresh, firstOfKey };
}

/**
 * Later rows repeating a key of the rows: the same body answers as the first row of that key, another
 * body is refused. A first row refused because its person is homed in another country (`elsewhere`)
 * passes that country on to its repeats, so a Record API duplicate is the same 421 as the first,
 * never the import row's refusal on `subject`.
 */
function settleRepeatedKeys(rows: CheckedRow[], firstOfKey: Map<string, CheckedRow>, outcomes: Map<number, ImportRowOutcome>, elsewhere?: Map<number, string>): void {
  for (const row of rows) {
    if (outcomes.has(row.index)) continue;
    const first = firstOfKey.get(row.idempotencyKey!)!;
    const answered = outcomes.get(first.index);
    if (first.fingerprint !== row.fingerprint) outcomes.set(row.index, refusal(row, [KEY_REUSED]));
    else {
      // A repeat of a recorded row records nothing new: the earlier row's record, replayed.
      outcomes.set(row.index, answered ? { ...answered, index: row.index, ...(answered.outcome === 'recorded' ? { replayed: true as const } : {}) } : refusal(row, [{ field: 'record', reason: 'not recorded' }]));
      const home = elsewhere?.get(first.index);
      if (home !== undefined) elsewhere!.set(row.index, home);
    }
  }
}

/** At most this many rounds of a batch's people (people): a round more for each new person homed elsewhere who decided a later row. */
const MATCH_ROUNDS = 3;

/** The batch's statements, for tests that read their plans. */
export const RECORD_BATCH_STATEMENTS = STATEMENTS;

/** ` WHERE guard`, or nothing without one. */
const where = (guard: string | undefined) => (guard ? ` WHERE ${guard}` : '');

/**
 * When the batch's records are recorded: $4 (the writer's clock), or just after the latest
 * `recorded_at` of the records they supersede when that is later. A person's newest record is the
 * one decided last, then recorded last (LATEST_OF_PERSON); a record superseding one decided at the
 * same moment must therefore be recorded after it, or the record it supersedes would still read as
 * the newest, and the next write would supersede that one a second time (which
 * UQ_consent_records_successor refuses, so the person could not be recorded again). Two writers in
 * the same millisecond, or a replica whose clock is behind another's, made such a pair.
 *
 * Those times come in the batch's document (`after`, read to the microsecond with each person's
 * newest record, Latest.recordedAt), not from the table: a record's `recorded_at` never changes, and
 * the record a row supersedes is the one read with it (the chain index or the batch's locks see to
 * that). Reading them from the table here (`record_id = ANY(…)` in a plan kept for the statement)
 * was a sequential scan of every record for every batch when the plan was made while the table was
 * small, as it is in a new deployment's first minutes (docs/performance.md, thirty-third session).
 */
const RECORDED_FROM = `(SELECT GREATEST($4::timestamptz, MAX(s."after")) FROM jsonb_to_recordset($5::jsonb) AS s("after" timestamptz))`;

/**
 * The insert of a batch's records ($1–$5); its outbox events ($6) are inserted by the same statement.
 * `guard`: a condition every row is inserted under (`whileActive`), else none.
 */
function insertRecordsSql(guard: string | undefined): string {
  return `INSERT INTO "decisions"."consent_records"
       ("record_id", "application_id", "flow_id", "flow_version", "subject_id", "purposes", "status", "channel", "captured_at", "recorded_at",
        "idempotency_key", "request_fingerprint", "supersedes", "withdrawals")
     SELECT r."id", $1, $2, $3, r."subject", r."purposes", r."status", r."channel", r."captured",
            -- One microsecond apart in row order, so "newest" stays the later row of the same person.
            ${RECORDED_FROM} + (r."n" * interval '1 microsecond'), r."key", r."fingerprint", r."supersedes", r."withdrawals"
       FROM jsonb_to_recordset($5::jsonb) AS r(${RECORD_ROWS.columns})${where(guard)}`;
}

/**
 * The withdrawal marks ($n) added to the records written before the batch that it supersedes, by
 * primary key (`= ANY` of the document's ids, in a kept plan too): joined with the document alone,
 * whose rows PostgreSQL estimates at a hundred, the plan was a hash join over every record of the
 * table until it held about 25,000 records (docs/performance.md, thirty-first session). A record the batch
 * itself makes and supersedes is inserted with its marks instead: an update in the same statement
 * would not see it.
 */
function withdrawSql(parameter: number, guard?: string): string {
  return `UPDATE "decisions"."consent_records" AS c SET "withdrawals" = c."withdrawals" || w."marks"
       FROM jsonb_to_recordset($${parameter}::jsonb) AS w(${WITHDRAWAL_ROWS.columns})
      WHERE c."record_id" = ANY(ARRAY(SELECT e->>'id' FROM jsonb_array_elements($${parameter}::jsonb) AS e)) AND c."record_id" = w."id"${guard ? ` AND ${guard}` : ''}`;
}

/**
 * The condition of a batch planned against the people's newest records read before its write
 * (RecordWriter: with the people, record's `latest`): each person of $8 (`subject`) still has that
 * newest record of the flow ($2; `latest`, null for none) in the statement's snapshot; when it
 * fails, the statement writes nothing and the batch reads them again. Under the batch's locks
 * (its transaction) nothing another locking writer does can change it before the commit. A batch
 * written without locks (it extends chains) uses it only for a row recorded late against another row
 * of the batch: another writer's extension committed after its snapshot is refused by
 * UQ_consent_records_successor for the rows that supersede, but a late row supersedes nothing. (A
 * row decided before a person's newest record in the database goes through the transaction: its
 * place in the chain is read under the locks, ImportBatch.chains.)
 */
const LATEST_UNCHANGED = `NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($8::jsonb) AS x("subject" text, "latest" text)
       WHERE x."latest" IS DISTINCT FROM (SELECT l."record_id" FROM (${LATEST_OF_PERSON('x."subject"', '$2')}) l))`;

/**
 * The condition of a batch written without locks against the people's newest records read before
 * (`$N`: each record's id, the withdrawal marks and the row version read with it): each is still
 * there with those marks, unchanged since (its `xmin`, when read), and is locked (FOR SHARE) until
 * the batch commits. A consent the person completes on the hosted pages at the same moment updates
 * their newest record first (supersedeOlderDecisions), so the same holds for it: completed first,
 * the row's new version fails the check and the transaction reads the hosted consent; completed
 * after, it waits for the batch and then reads its record as the newest. A withdrawal the person makes on it at
 * the same moment (ConsentPersonRecords.withdraw locks it FOR UPDATE) then either committed first,
 * and the condition, checked again on the row it committed, fails: the statement writes nothing and
 * the batch goes through the transaction, which reads the marks again and carries the withdrawal;
 * or waits for the batch, and then finds the record replaced (409). Without it a newer record
 * written at that moment carried nothing while consent_status counted the withdrawal against it.
 * The rows are locked in `record_id` order, the order in which a batch's transaction updates older
 * records (withdrawSql, by the primary key), so that the two cannot wait for each other; they are
 * found by the primary key (`= ANY(ARRAY(…))`, as withdrawSql finds them: a join with the document
 * was planned as a scan of every record, 8 ms a batch of returning people).
 */
export const PREDECESSORS_UNCHANGED = (parameter: number) => `(SELECT count(*) FROM (
         SELECT 1 FROM "decisions"."consent_records" p
          WHERE p."record_id" = ANY(ARRAY(SELECT e->>'id' FROM jsonb_array_elements($${parameter}::jsonb) AS e))
            AND EXISTS (SELECT 1 FROM jsonb_array_elements($${parameter}::jsonb) AS e
                         WHERE e->>'id' = p."record_id" AND e->'marks' = p."withdrawals" AND (e->>'version' IS NULL OR e->>'version' = p."xmin"::text))
          ORDER BY p."record_id" FOR SHARE OF p) AS "locked") = jsonb_array_length($${parameter}::jsonb)`;

const PREDECESSOR_ROWS = new JsonRecordset<{ id: string; marks: WithdrawalMark[]; version?: string }>([
  { key: 'id', read: (row) => row.id },
  { key: 'marks', read: (row) => row.marks, type: 'jsonb' },
  { key: 'version', read: (row) => row.version },
]);

/** $1–$6 of the records' inserts (insertRecordsSql and the outbox's): the batch's records and their events. */
const recordsParameters = (applicationId: string, flow: { id: string; version: number }, planned: Planned): unknown[] => [
  applicationId,
  flow.id,
  flow.version,
  planned.recordedAt,
  RECORD_ROWS.document(planned.records),
  outboxDocument(planned.events),
];

/** The withdrawal update alone (its document as $1), for tests that read its plan. */
export const RECORD_BATCH_WITHDRAW_SQL = withdrawSql(1);

/**
 * The condition of a batch written against a remembered flow version (RecordWriter): that version
 * ($2, $3) is still the flow's active one. Every insert of the statement carries it, so a superseded
 * version writes nothing at all (the statement inserts no event, which is how it is told).
 */
const WHILE_ACTIVE = versionStillActiveSql('$2', '$3::int');

/** None of the people of the batch's records ($5) has a standing consent given on the hosted pages in the flow ($2) of the application ($1). */
const NO_STANDING_HOSTED = `NOT EXISTS (${standingHostedConsentsSql(`ANY(ARRAY(SELECT e->>'subject' FROM jsonb_array_elements($5::jsonb) AS e))`, '$1', '$2')})`;

/**
 * The batch's records, the withdrawals of the records before it that they supersede ($7) and their
 * outbox events in one statement (two round trips fewer per batch): the records' insert and the
 * update are data-modifying `WITH`s, which PostgreSQL runs to completion whether or not the outer
 * insert reads them; the events' insert is the outbox's own (`outboxInsertSql`). Under the guard
 * (`whileActive`) a superseded version inserts nothing, and the caller undoes the transaction, the
 * update with it.
 */
function insertRecordsWithEvents(dataSource: DataSource, whileActive: boolean, latestRead: boolean, predecessorsRead = false): PreparedStatement {
  // The predecessors' check is made once, before anything of the statement writes (its withdrawal
  // update changes those very rows, which a second look FOR SHARE would then skip).
  const guard =
    [...(whileActive ? [WHILE_ACTIVE] : []), ...(latestRead ? [LATEST_UNCHANGED] : []), ...(predecessorsRead ? ['(SELECT "unchanged" FROM "predecessors")'] : [])].join(' AND ') || undefined;
  // Without locks, the batch's people must also still have no standing consent given on the hosted
  // pages in the flow (the lookup said so): one completed since is taken back from in the transaction.
  const predecessors = predecessorsRead ? `"predecessors" AS MATERIALIZED (SELECT ${PREDECESSORS_UNCHANGED(latestRead ? 9 : 8)} AND ${NO_STANDING_HOSTED} AS "unchanged"), ` : '';
  return new PreparedStatement(
    `decisions_records_with_events${whileActive ? '_while_active' : ''}${latestRead ? '_latest_read' : ''}${predecessorsRead ? '_predecessors' : ''}`,
    `WITH ${predecessors}"records" AS (${insertRecordsSql(guard)}), "withdrawn" AS (${withdrawSql(7, guard)}) ${outboxInsertSql(dataSource, 6)}${where(guard)}`,
    { expected: isRaceLost },
  );
}

/**
 * The same with the batch's new people ($7) inserted first, for a batch whose people are all new:
 * one statement, committed on its own. No `ON CONFLICT` here: a person another batch inserted
 * meanwhile fails the whole statement, and the batch goes through the transaction instead.
 */
function insertNewPeopleWithRecords(dataSource: DataSource, whileActive: boolean): PreparedStatement {
  const guard = whileActive ? WHILE_ACTIVE : undefined;
  return new PreparedStatement(
    `decisions_records_insert_new_people${whileActive ? '_while_active' : ''}`,
    `WITH "people" AS (
       INSERT INTO "decisions"."subjects" ("id", "application_id", "email", "external_id", "created_at")
       SELECT r."id", $1, r."email", r."external_id", now() FROM jsonb_to_recordset($7::jsonb) AS r(${PEOPLE_ROWS.columns})${where(guard)}
     ), "records" AS (${insertRecordsSql(guard)}) ${outboxInsertSql(dataSource, 6)}${where(guard)}`,
    { expected: (error) => isSubjectConflict(error) || isDeadlock(error) },
  );
}

/** The inserts of a batch of new people (plain and guarded by the flow version), for tests that read their plans. */
export const recordBatchNewPeopleInserts = (dataSource: DataSource): PreparedStatement[] => [false, true].map((whileActive) => insertNewPeopleWithRecords(dataSource, whileActive));

/**
 * A write that met another writer's extension of the same chain (a second record superseding the
 * same one, which the database refuses), or deadlocked with it over the records both withdraw from:
 * it wrote nothing, and reading the newest records again decides it.
 */
const isRaceLost = ({ code, constraint }: { code?: string; constraint?: string }) =>
  (code === UNIQUE_VIOLATION && constraint === 'UQ_consent_records_successor') || isDeadlock({ code });
/** How many times a batch's transaction is tried when it keeps losing such races (retriedWhileRacing). */
const RACE_TRIES = 5;

/**
 * A bind of the batch's transaction that another writer's commit made void: the person was given
 * another identifier (or this one) meanwhile, so the update found the column no longer empty, or
 * the identifier went to someone else (the subjects' unique index). The transaction is undone, and
 * the batch decided again from what is recorded now (ImportBatch.record).
 */
class BindRaced extends Error {
  constructor() {
    super('another writer gave a person of the batch an identifier, or gave one of its identifiers to someone else, at the same moment');
  }
}
/** Whether the directory homed here (`homing`) someone for the batch whom it did not write (`result`). */
function notWritten(homing: Person[], result: BatchResult): boolean {
  if (homing.length === 0) return false;
  const written = new Set([...result.made.values()].map((made) => made.subjectId));
  return homing.some((person) => !written.has(person.id));
}

/** The field of the identifier a bind gives a person (what a refused bind names). */
type BindField = 'subject.external_id' | 'subject.email';

/** How many times a batch is decided when its binds keep losing races (BindRaced); the last one's error is thrown. */
const BIND_TRIES = 3;

/** An identifier a batch gives a person found by the other one (a bind), as the directory learnt it. */
interface BoundIdentifier {
  kind: 'email' | 'external_id';
  value: string;
}

/**
 * Records a chunk of import rows in one transaction instead of one per row: people found and homed
 * in bulk (one directory round for the new ones), records, predecessor withdrawals and outbox
 * events inserted with arrays. The rules are the Record API's: idempotency keys replay or refuse,
 * a later record of the same person and flow supersedes (in row order within the chunk too), and
 * a person homed in another country is refused with that country only.
 */
@Injectable()
export class ImportBatch {
  /** The inserts, each plain and guarded by the flow version (`whileActive`). */
  private readonly recordsWithEvents = new Map<string, PreparedStatement>();
  private readonly newPeopleWithRecords = new Map<string, PreparedStatement>();
  /** Each flow version's consent term read so far, by `<flow>@<version>` (durations). */
  private readonly versionDurations = new Map<string, string | null>();

  private readonly logger = new Logger(ImportBatch.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly subjects: SubjectsService,
    private readonly clients: ServiceClients,
    private readonly relay: OutboxRelay,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * The flow version a Record API batch is written against (the pinned `version`, else the newest
   * active one; null when there is none) and the people of `emails` and `externalIds` already
   * recorded in the application, in one round trip (RecordWriter: the known people go to `record`).
   */
  async flowAndKnownPeople(
    applicationId: string,
    flow: { id: string; version?: number },
    emails: string[],
    externalIds: string[],
  ): Promise<{ flow: FlowVersion | null; known: KnownPerson[] }> {
    const values = [applicationId, emails, flow.id, flow.version ?? null];
    const [row] =
      externalIds.length === 0
        ? await STATEMENTS.flowAndKnownPeople.rows(this.dataSource, values)
        : await STATEMENTS.flowAndKnownPeopleWithExternalIds.rows(this.dataSource, [...values, externalIds]);
    const known = knownPeopleFrom(row.known_people);
    return { flow: row.id === null ? null : entityFromRow(this.dataSource.getMetadata(FlowVersion), row, new FlowVersion()), known };
  }

  /**
   * The people of `rows` already recorded in the application, and the directory's claim of those it
   * knows no one of (`residency-router.claim-new`): each such person is homed here, under an id made
   * now. The claim writes nothing for anyone the directory knows, so a person recorded here before
   * keeps their one id; a person it claimed who turns out to be recorded here already (their
   * directory entry was lost) leaves an id of no one in the directory, which reveals nothing.
   * `claimed`: e-mail address → the id the person was homed under.
   *
   * Without idempotency keys the lookup and the claim go at once (two round trips in the time of
   * one), and every row's person is claimed: nothing after this refuses a row of a remembered
   * version (the capture rules were checked before). With `claimFirst` (RecordWriter, when its
   * last batch was all new people) the claim goes alone and only the people it did not home are
   * looked up after it: a batch of new people costs one statement fewer, one with someone known a
   * round trip more. With `lookUpFirst` (its last batch was all people recorded before) the lookup
   * goes alone and only whom it does not find is claimed, after it: a batch of returning people asks
   * the directory nothing. With `flowId` (no keys), each known person's newest record of that flow
   * comes with the lookup (`latest`, for record), and whose consent given on the hosted pages in it
   * stands (`hosted`, for record). With keys, the same statement also reads which
   * of them were used before (`earlier`, as `record` reads them), and the claim waits for that
   * answer: a row whose key was used before is answered from the earlier record or refused, and a
   * row repeating a key of an earlier row of the batch is settled by that row, so their people are
   * not claimed. A request refused for its key leaves nothing of its person behind, not even a
   * directory entry. That costs keyed batches a round trip on the request path (about 9 % of a keyed
   * saturation load's rate: docs/performance.md, twentieth session).
   */
  async knownAndClaimed(
    applicationId: string,
    rows: Array<{ email: string; idempotencyKey?: string }>,
    options: { claimFirst?: boolean; lookUpFirst?: boolean; flowId?: string } = {},
  ): Promise<{ known: KnownPerson[]; claimed: Map<string, string>; earlier?: Map<string, EarlierKey>; latest?: Map<string, Latest | null>; hosted?: Set<string> }> {
    const emails = [...new Set(rows.map((row) => row.email))];
    const keys = [...new Set(rows.flatMap((row) => (row.idempotencyKey ? [row.idempotencyKey] : [])))];
    if (keys.length === 0) {
      // The people already recorded, by e-mail address; with `flowId`, each with their newest record
      // of the flow, which the write then checks instead of reading it (record, `latest`).
      const { flowId } = options;
      const lookUp = async (addresses: string[]): Promise<{ known: KnownPerson[]; latest?: Map<string, Latest | null>; hosted?: Set<string> }> => {
        if (flowId === undefined) return { known: addresses.length === 0 ? [] : await STATEMENTS.knownPeopleByEmail.rows(this.dataSource, [applicationId, addresses]) };
        const found = addresses.length === 0 ? [] : await STATEMENTS.knownPeopleByEmailWithLatest.rows(this.dataSource, [applicationId, addresses, flowId]);
        const durations = await this.durations(flowId, found.flatMap((person) => (person.latest_version === null ? [] : [person.latest_version])));
        return {
          known: found.map(({ id, email, external_id }) => ({ id, email, external_id })),
          hosted: new Set(found.flatMap((person) => (person.hosted ? [person.id] : []))),
          latest: new Map(
            found.map((person) => [
              person.id,
              person.latest_record === null
                ? null
                : {
                    recordId: person.latest_record,
                    flowVersion: person.latest_version!,
                    purposes: person.latest_purposes!,
                    withdrawals: person.latest_withdrawals!,
                    capturedAt: new Date(person.latest_captured!).getTime(),
                    lapsesAt: lapseOf(person.latest_captured!, durations.get(person.latest_version!)),
                    recordedAt: person.latest_recorded!,
                    rowVersion: person.latest_row_version!,
                  },
            ]),
          ),
        };
      };
      if (options.claimFirst) {
        // Whom the directory homes now is new here (their entry was in no country), so only the
        // others are looked up, after the claim. A person recorded here whose entry was lost is
        // claimed too: the write of new people then meets their row and the batch takes the
        // transaction, which keeps their one id (record).
        const claimed = await this.claimNew(applicationId, emails);
        return { ...(await lookUp(emails.filter((email) => !claimed.has(email)))), claimed };
      }
      if (options.lookUpFirst) {
        // The people of the last batch were all recorded here already (returning people): only those
        // the lookup does not find are claimed, after it, so a batch of returning people asks the
        // directory nothing.
        const found = await lookUp(emails);
        const recorded = new Set(found.known.map((person) => person.email));
        return { ...found, claimed: await this.claimNew(applicationId, emails.filter((email) => !recorded.has(email))) };
      }
      const [found, claimed] = await Promise.all([lookUp(emails), this.claimNew(applicationId, emails)]);
      return { ...found, claimed };
    }
    const [row] = await STATEMENTS.knownPeopleAndEarlierKeys.rows(this.dataSource, [applicationId, emails, keys]);
    const known = knownPeopleFrom(row.known_people);
    const earlier = new Map<string, EarlierKey>(
      row.earlier_keys.map(([key, recordId, fingerprint]) => [key, { idempotency_key: key, record_id: recordId, request_fingerprint: fingerprint }]),
    );
    // Whose person `record` will write: as it sorts the rows (an earlier key, a repeated key, fresh).
    const recorded = new Set(known.map((person) => person.email));
    const seenKeys = new Set<string>();
    const needed = new Set<string>();
    for (const { email, idempotencyKey: key } of rows) {
      if (key && (earlier.has(key) || seenKeys.has(key))) continue;
      if (key) seenKeys.add(key);
      if (!recorded.has(email)) needed.add(email);
    }
    return { known, claimed: await this.claimNew(applicationId, [...needed]), earlier };
  }

  /** The directory's claim of these people (none of them recorded here yet, as far as is known): e-mail → the id each was homed under. */
  private async claimNew(applicationId: string, emails: string[]): Promise<Map<string, string>> {
    const claimed = new Map<string, string>();
    if (emails.length === 0) return claimed;
    const ids = emails.map(() => newSubjectId(this.context.env.COUNTRY));
    const reply = await firstValueFrom(
      this.clients.own.send<ClaimNewReply, ClaimNewRequest>(RESIDENCY_CLAIM_NEW, {
        subjects: emails.map((email) => ({ reference: this.subjects.newPersonReferences(applicationId, { email }).references[0] })),
      }),
    );
    emails.forEach((email, i) => {
      if (reply.claimed[i]) claimed.set(email, ids[i]);
    });
    return claimed;
  }

  /**
   * Records the rows (all of one application and flow version) in one transaction. Imports send
   * their chunks here; the Record API sends the requests that arrive together (RecordWriter), with
   * the people it found already recorded (`known`: by the rows' e-mail addresses and external ids,
   * looked up with the flow version); without them they are looked up here. `claimed`: people of
   * e-mail-only rows the directory homed here already (knownAndClaimed), under these ids. `earlier`:
   * the rows' idempotency keys used before, looked up with the people (knownAndClaimed); without it
   * they are looked up here.
   * `whileActive`: the flow version was remembered, not read just now; the rows are written only
   * while it is still the flow's active one, else nothing is written and StaleFlowVersion is thrown.
   *
   * When the write fails (anything but StaleFlowVersion, after which the caller writes the rows
   * again under the same claims), the directory entries of the new people the batch homed, or was
   * given homed (`claimed`), are released (releaseNewPeople), and their e-mail addresses leave
   * `claimed`: a caller that tries the rows again registers them afresh.
   *
   * A bind (an identifier given to a person found by the other one) that another writer made void
   * between the lookup and the write (BindRaced: it gave the person an identifier first, or gave
   * this one to someone else) undoes the write, and the rows are decided again from what is recorded
   * then, as if sent after that writer: such a row is refused by the usual rules (on
   * `subject.external_id`), or recorded for the person who has its identifier now; the directory
   * entry made for an identifier nobody holds is released (releaseUnbound). A batch that binds
   * nothing costs nothing more.
   */
  async record(
    applicationId: string,
    flow: BatchFlow,
    rows: CheckedRow[],
    known?: KnownPerson[],
    options: { claimed?: Map<string, string>; whileActive?: boolean; earlier?: Map<string, EarlierKey>; latest?: Map<string, Latest | null>; hosted?: Set<string> } = {},
  ): Promise<BatchResult> {
    const homing: Person[] = [];
    /** The identifiers the directory learnt for the batch's binds (registerBindings), in every try. */
    const bound: BoundIdentifier[] = [];
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const result = await this.write(applicationId, flow, rows, known, options, homing, bound);
          // New people the directory homed here for the batch whom it did not write (a try before
          // registered them and the batch decided again refused their rows, or another writer's row
          // turned them into a conflict): their identifiers nobody holds here name no one again.
          if (notWritten(homing, result)) await this.releaseNewPeople(applicationId, homing);
          // A try before lost a race for a bind: what the directory learnt for it and nobody holds now
          // (the identifier the other writer's person did not take) is taken out again.
          if (attempt > 1) await this.releaseUnbound(applicationId, bound);
          return result;
        } catch (error) {
          if (!(error instanceof BindRaced) || attempt >= BIND_TRIES) throw error;
          // Decided again from what is recorded now: the people, their newest records and the keys
          // read again, so the rows meet the other writer's bind as if sent after it.
          known = undefined;
          options = { claimed: options.claimed, whileActive: options.whileActive };
        }
      }
    } catch (error) {
      if (!(error instanceof StaleFlowVersion)) {
        await this.releaseNewPeople(applicationId, homing, options.claimed);
        await this.releaseUnbound(applicationId, bound);
      }
      throw error;
    }
  }

  /**
   * The directory's claims of `claimed` (e-mail address → the id it homed the person under,
   * knownAndClaimed) whose person no row wrote (`written`: the people the rows were recorded for),
   * released as a failed write's are (releaseNewPeople: only identifiers no person stored here
   * holds; one release per claim), and taken out of `claimed`.
   */
  async releaseUnwrittenClaims(applicationId: string, claimed: Map<string, string>, written: Set<string>): Promise<void> {
    const unwritten = new Map([...claimed].filter(([, id]) => !written.has(id)));
    if (unwritten.size > 0) await this.releaseNewPeople(applicationId, [], unwritten);
    for (const email of unwritten.keys()) claimed.delete(email);
  }

  /**
   * The directory entries the batch's binds made (`bound`) for identifiers that no person of the
   * application holds here (a bind that lost its race, or a write that failed), released
   * (`residency-router.release`), as SubjectsService.releaseUnbound releases a lost bind's: so the
   * identifier names no one here instead of sending its requests to a person who does not have it.
   * The directory keeps an entry another request relied on since. Best effort: a release that fails
   * is logged, and the entry stays homed here.
   */
  private async releaseUnbound(applicationId: string, bound: BoundIdentifier[]): Promise<void> {
    if (bound.length === 0) return;
    try {
      const emails = [...new Set(bound.flatMap(({ kind, value }) => (kind === 'email' ? [value] : [])))];
      const externalIds = [...new Set(bound.flatMap(({ kind, value }) => (kind === 'external_id' ? [value] : [])))];
      const stored = await STATEMENTS.knownPeople.rows(this.dataSource, [applicationId, emails, externalIds]);
      const held = new Set(stored.flatMap((person) => [`email ${person.email}`, `external_id ${person.external_id}`]));
      const references = bound
        .filter(({ kind, value }) => !held.has(`${kind} ${value}`))
        .map(({ kind, value }) => this.subjects.newPersonReferences(applicationId, kind === 'email' ? { email: value } : { externalId: value }).references[0]);
      if (references.length === 0) return;
      // One release per registration: `bound` holds a bind once for each try that registered it.
      await firstValueFrom(this.clients.own.send<ReleaseReply, ReleaseRequest>(RESIDENCY_RELEASE, { references }));
    } catch (error) {
      this.logger.warn(`the directory entries of ${bound.length} identifiers a batch did not keep were not released (${String(error)}); they stay homed here`);
    }
  }

  /**
   * After a failed write, or one that left some of them out (notWritten): the directory entries of
   * the batch's new people (`homing`, registered by it; and those `claimed` for it before) for the
   * identifiers that name no person stored in the application, released (`residency-router.release`:
   * their opaque references only; only entries homed here). An identifier another person holds
   * now keeps its entry. The directory keeps an entry another request relied on since (it found the
   * person homed here and writes them), and tells the peers without waiting for them. A release that
   * fails is logged: the batch's own answer or error is what the caller gets.
   */
  private async releaseNewPeople(applicationId: string, homing: Person[], claimed?: Map<string, string>): Promise<void> {
    // One release per registration (`homing` holds each person as often as the directory was asked
    // to home them: a try decided again registers them again, and each registration is a party of
    // their entries), so an entry two tries relied on goes once both released it.
    const identities = homing.flatMap((person) => (person.email ? [{ email: person.email, externalId: person.externalId }] : []));
    for (const email of claimed?.keys() ?? []) identities.push({ email, externalId: null });
    if (identities.length === 0) return;
    // A retry of these rows registers their people again instead of taking the released claims.
    for (const { email } of identities) claimed?.delete(email);
    try {
      const emails = [...new Set(identities.map((person) => person.email))];
      const externalIds = [...new Set(identities.flatMap((person) => (person.externalId ? [person.externalId] : [])))];
      const stored = await STATEMENTS.knownPeople.rows(this.dataSource, [applicationId, emails, externalIds]);
      const storedEmails = new Set(stored.map((person) => person.email));
      const storedIds = new Set(stored.map((person) => person.external_id));
      const references = identities.flatMap(
        ({ email, externalId }) =>
          this.subjects.newPersonReferences(applicationId, {
            ...(storedEmails.has(email) ? {} : { email }),
            ...(externalId && !storedIds.has(externalId) ? { externalId } : {}),
          }).references,
      );
      if (references.length === 0) return;
      await firstValueFrom(this.clients.own.send<ReleaseReply, ReleaseRequest>(RESIDENCY_RELEASE, { references }));
    } catch (error) {
      this.logger.warn(`the directory entries of ${identities.length} new people the batch did not write were not released (${String(error)}); they stay homed here`);
    }
  }

  private async write(
    applicationId: string,
    flow: BatchFlow,
    rows: CheckedRow[],
    known: KnownPerson[] | undefined,
    options: { claimed?: Map<string, string>; whileActive?: boolean; earlier?: Map<string, EarlierKey>; latest?: Map<string, Latest | null>; hosted?: Set<string> },
    homing: Person[],
    bound: BoundIdentifier[],
  ): Promise<BatchResult> {
    const whileActive = options.whileActive ?? false;
    const created = new Set<number>();
    const made = new Map<number, MadeRecord>();
    const elsewhere = new Map<number, string>();
    if (rows.length === 0) return { outcomes: [], created, made, elsewhere };
    const outcomes = new Map<number, ImportRowOutcome>();
    const refuse = (row: CheckedRow, reasons: FieldIssue[]) => outcomes.set(row.index, refusal(row, reasons));

    // Idempotency keys used before: the same body answers the earlier record, another body is refused.
    const earlier = options.earlier ?? (await this.earlierKeys(applicationId, rows));
    const { fresh, firstOfKey } = sortByKey(rows, earlier, outcomes);

    const people = await this.people(applicationId, fresh, known, options.claimed, homing);
    let homed = fresh.filter((row) => {
      const person = people.get(row.index);
      if (typeof person === 'string') {
        refuse(row, [{ field: 'subject', reason: `the person's home country is ${person}; import them there` }]);
        elsewhere.set(row.index, person);
        return false;
      }
      if (isConflict(person)) {
        refuse(row, [person]);
        return false;
      }
      return true;
    });
    let persons = [...new Map(homed.map((row) => [(people.get(row.index) as Person).id, people.get(row.index) as Person])).values()];
    // Identifiers kept for people found by the other one (an external id for a person found by
    // e-mail address, an address for one found by external id): refused when the directory homes
    // the identifier in another country (it names another person there), else the directory learns it first.
    let binding = persons.filter((person) => person.bindExternalId !== undefined || person.bindEmail !== undefined);
    /** The binds of `taken` not kept: the rows giving those identifiers refused, the people's binds dropped. */
    const dropTaken = (taken: Map<Person, BindField>) => {
      if (taken.size === 0) return;
      homed = homed.filter((row) => {
        const person = people.get(row.index) as Person;
        const field = taken.get(person);
        // Only the rows giving the identifier are refused: the person's other rows are theirs.
        const gives = field === 'subject.external_id' ? row.externalId === person.bindExternalId : field === 'subject.email' ? row.email === person.bindEmail : false;
        if (gives) refuse(row, [{ field: field!, reason: 'belongs to another person of this application' }]);
        return !gives;
      });
      for (const [person, field] of taken) {
        if (field === 'subject.external_id') delete person.bindExternalId;
        else delete person.bindEmail;
      }
      persons = [...new Map(homed.map((row) => [(people.get(row.index) as Person).id, people.get(row.index) as Person])).values()];
      binding = persons.filter((person) => person.bindExternalId !== undefined || person.bindEmail !== undefined);
    };
    if (binding.length > 0) {
      dropTaken(await this.bindingsHomedElsewhere(applicationId, binding));
      if (binding.length > 0) {
        // Learnt by the directory, for a release should the bind not be kept (record).
        for (const person of binding) bound.push(person.bindExternalId !== undefined ? { kind: 'external_id', value: person.bindExternalId } : { kind: 'email', value: person.bindEmail! });
        // A peer that claimed the identifier first (someone there has it, claimed while the lookup
        // above ran) takes it from the bind as the lookup would have.
        dropTaken(await this.registerBindings(applicationId, binding));
      }
    }
    // In e-mail order, so two batches inserting the same people wait for each other instead of deadlocking.
    const newPeople = persons.filter((person) => person.isNew).sort((a, b) => (a.email! < b.email! ? -1 : a.email! > b.email! ? 1 : 0));

    // The people's newest records read with them before (RecordWriter: `latest`), for a batch of
    // people all recorded before: checked by the write instead of read again. When each of them has
    // a newest record of the flow, the batch extends their chains, which the database keeps linear
    // (UQ_consent_records_successor): one statement without locks, refused when another writer
    // extended one of the chains meanwhile, and the batch then goes through the transaction.
    const readBefore = options.latest;
    // People recorded before the batch who may have a standing consent given on the hosted pages in
    // the flow (all of them, unless the lookup said whose: `hosted`): what the batch's records no
    // longer grant is taken back from it in the transaction (withdrawFromHostedConsents).
    let hostedRead = options.hosted;
    const hostedMaybe = (person: Person) => !person.isNew && (hostedRead === undefined || hostedRead.has(person.id));
    const extendsChains =
      readBefore !== undefined && persons.length > 0 && newPeople.length === 0 && binding.length === 0 && persons.every((person) => readBefore.get(person.id)) && !persons.some(hostedMaybe);
    let written = newPeople.length === persons.length ? await this.recordNewPeople(applicationId, flow, homed, people, newPeople, whileActive) : undefined;
    if (!written && extendsChains) {
      written = await this.writeAgainstLatestRead(this.dataSource.manager, applicationId, flow, homed, people, persons, readBefore, whileActive, true).catch((error: unknown) => {
        if (isRaceLost(error as { code?: string; constraint?: string })) return undefined;
        throw error;
      });
      // Written nothing: a newest record changed, or a hosted consent was completed since the lookup
      // (NO_STANDING_HOSTED); the transaction reads everyone's.
      if (!written) hostedRead = undefined;
    }
    written ??= await this.retriedWhileRacing(() => this.dataSource.transaction(async (manager) => {
      let raced: Person[] = [];
      // The rows written and their people: less the people another writer's row turned into a conflict meanwhile.
      let writable = homed;
      let writers = persons;
      const binds = [...binding];
      if (newPeople.length > 0) {
        const inserted = await STATEMENTS.insertPeople.rows(manager, [applicationId, PEOPLE_ROWS.document(newPeople)]);
        if (inserted.length < newPeople.length) {
          // Someone recorded one of these people meanwhile (a Record API call), or gave another person
          // one of their external ids: the row that won decides, by the same rules as a lookup.
          const won = new Set(inserted.map((row) => row.id));
          raced = newPeople.filter((person) => !won.has(person.id));
          const externalIds = raced.flatMap((person) => (person.externalId ? [person.externalId] : []));
          const rows = await STATEMENTS.knownPeople.rows(manager, [applicationId, raced.map((person) => person.email), externalIds]);
          const lost = new Map<Person, SubjectConflict>();
          for (const person of raced) {
            const byAddress = rows.find((row) => row.email === person.email);
            const byId = person.externalId ? rows.find((row) => row.external_id === person.externalId) : undefined;
            const conflict = subjectConflict({ email: person.email!, externalId: person.externalId ?? undefined }, byId, byAddress, undefined, new Set());
            const found = byId ?? byAddress;
            if (conflict || !found) {
              lost.set(person, conflict ?? { field: 'subject', reason: 'another request recorded this person at the same moment; send the row again' });
              continue;
            }
            person.id = found.id;
            // An external id this row gives the person the other writer recorded without one, or the
            // address it gives the person the other writer recorded by external id alone: kept for them.
            if (person.externalId && !found.external_id) binds.push({ ...person, bindExternalId: person.externalId });
            else if (!found.email) binds.push({ ...person, bindEmail: person.email! });
          }
          if (lost.size > 0) {
            writable = homed.filter((row) => {
              const conflict = lost.get(people.get(row.index) as Person);
              if (conflict) refuse(row, [conflict]);
              return conflict === undefined;
            });
            writers = persons.filter((person) => !lost.has(person));
          }
        }
      }
      if (binds.length > 0) await this.bind(manager, applicationId, binds);
      // Per-person-and-flow locks, in a fixed order against deadlocks, taken by every transaction that
      // reads the newest records (a batch extending chains takes none: the chain index stops its races).
      const lockKeys = writers.map((person) => `records:${person.id}:${flow.id}`).sort();
      await STATEMENTS.lock.run(manager, [lockKeys]);
      // The newest records read before (`latest`: a batch with new people too, or people without a
      // record of the flow yet) are checked by the insert under the locks instead of read again (a
      // round trip fewer); when one changed meanwhile (another writer), the insert writes nothing and
      // they are read now. (A batch that extends chains comes here only when its write without locks
      // found one extended.)
      // The batch's records take back what they no longer grant from the standing hosted consents of
      // their people recorded before (or met as another writer's just now: raced), under the same locks.
      const withHosted = async (planned: Planned): Promise<Planned> => {
        const recordedBefore = writers.filter((person) => raced.includes(person) || hostedMaybe(person)).map((person) => person.id);
        const records = planned.records.map((record) => ({ recordId: record.recordId, person: record.person, capturedAt: record.row.capturedAt, purposes: record.row.purposes, channel: record.row.channel ?? 'imported' }));
        await withdrawFromHostedConsents(manager, applicationId, flow.id, recordedBefore, records);
        return planned;
      };
      if (readBefore && !extendsChains && raced.length === 0 && writers.length > 0 && writers.every((person) => person.isNew || readBefore.has(person.id))) {
        const planned = await this.writeAgainstLatestRead(manager, applicationId, flow, writable, people, writers, readBefore, whileActive);
        if (planned) return withHosted(planned);
      }
      const latest = await this.latest(manager, writers.map((person) => person.id), flow.id);
      const planned = this.plan(applicationId, flow, writable, people, await this.chains(manager, flow.id, writable, people, latest));
      // Every event belongs to a record of this batch: no records, no events.
      if (planned.records.length > 0) {
        const insert = this.statement(this.recordsWithEvents, whileActive, insertRecordsWithEvents);
        const { rowCount } = await insert.run(manager, [...recordsParameters(applicationId, flow, planned), WITHDRAWAL_ROWS.document(planned.withdrawals)]);
        // No event inserted: the version is no longer active, and everything of the transaction is undone.
        if (whileActive && rowCount === 0) throw new StaleFlowVersion(flow.id);
      }
      return withHosted(planned);
    }));
    for (const [index, record] of written.made) {
      outcomes.set(index, { index, outcome: 'recorded', record_id: record.recordId });
      created.add(index);
      made.set(index, record);
    }
    const recorded = written.records.length;
    if (recorded > 0) this.relay.kick();

    // Later rows repeating a key of this chunk: the same body answers the record made for the first
    // (or its person's home country).
    settleRepeatedKeys(rows, firstOfKey, outcomes, elsewhere);
    return { outcomes: rows.map((row) => outcomes.get(row.index)!), created, made, elsewhere };
  }

  /**
   * What `record` would do with the rows, writing nothing and homing no one (an import's dry run):
   * the same answers for idempotency keys used before or repeated in the rows, for identifiers that
   * name different people, and for people homed in another country (the directory is asked where
   * each new person lives, `residency-router.locate-many`, and claims nothing). A row it answers
   * `recorded` may still meet what changes until the real import (another writer's record, a person
   * homed meanwhile). `earlierInRun`: what the run's earlier chunks would write that these rows
   * meet (their keys and people, which the real import would find written); answers with the
   * outcomes what this chunk would write (`ledger`), for the chunks after it.
   */
  async preview(applicationId: string, rows: CheckedRow[], earlierInRun?: DryRunLedger): Promise<{ outcomes: ImportRowOutcome[]; ledger: DryRunLedger }> {
    const outcomes = new Map<number, ImportRowOutcome>();
    // The keys earlier chunks of the run would record count as used before (their records have no id yet).
    const earlier = await this.earlierKeys(applicationId, rows);
    for (const { idempotency_key: key, fingerprint } of earlierInRun?.keys ?? []) {
      if (!earlier.has(key)) earlier.set(key, { idempotency_key: key, record_id: null, request_fingerprint: fingerprint });
    }
    const { fresh, firstOfKey } = sortByKey(rows, earlier, outcomes);
    const emails = [...new Set(fresh.map((row) => row.email))];
    const externalIds = [...new Set(fresh.flatMap((row) => (row.externalId ? [row.externalId] : [])))];
    const known = emails.length === 0 ? [] : await STATEMENTS.knownPeople.rows(this.dataSource, [applicationId, emails, externalIds]);
    // The people earlier chunks would record or give an external id, as the real import would find them.
    for (const carried of earlierInRun?.people ?? []) {
      const recorded = known.filter((person) => person.email === carried.email);
      if (recorded.length > 0) recorded.forEach((person) => (person.external_id ??= carried.external_id));
      else known.push({ id: `earlier ${carried.email}`, email: carried.email, external_id: carried.external_id });
    }
    // Where the people not recorded here live, if anywhere: a person homed elsewhere is refused, and
    // the rows after theirs decided again without them, in rounds as the import's (people).
    const located = new Map<string, { externalId: string | null; home: string | undefined }>();
    const elsewhere = new Map<number, string>();
    let matches = new Map<number, PersonMatch>();
    for (let round = 0; round < MATCH_ROUNDS; round++) {
      matches = matchPeople(
        fresh.filter((row) => !elsewhere.has(row.index)),
        known,
      );
      const newcomers = [...new Set([...matches.values()].flatMap((match) => (match && 'newcomer' in match ? [match.newcomer] : [])))];
      const toLocate = newcomers.filter((person) => {
        const seen = located.get(person.email!);
        return !seen || seen.externalId !== person.external_id;
      });
      if (toLocate.length === 0) break;
      for (let start = 0; start < toLocate.length; start += 1000) {
        const chunk = toLocate.slice(start, start + 1000);
        const { homes } = await firstValueFrom(
          this.clients.own.send<LocateManyReply, LocateManyRequest>(RESIDENCY_LOCATE_MANY, {
            people: chunk.map((person) => this.subjects.newPersonReferences(applicationId, { email: person.email!, externalId: person.external_id ?? undefined })),
          }),
        );
        chunk.forEach((person, i) => located.set(person.email!, { externalId: person.external_id, home: homes[i] ?? undefined }));
      }
      let grew = false;
      for (const [index, match] of matches) {
        const home = match && 'newcomer' in match ? located.get(match.newcomer.email!)?.home : undefined;
        if (home && home !== this.context.env.COUNTRY) {
          elsewhere.set(index, home);
          grew = true;
        }
      }
      if (!grew) break;
    }
    const ledger: DryRunLedger = { keys: [], people: [] };
    const introduced = new Set<KnownPerson>();
    for (const row of fresh) {
      const home = elsewhere.get(row.index);
      const match = matches.get(row.index)!;
      if (home !== undefined) outcomes.set(row.index, refusal(row, [{ field: 'subject', reason: `the person's home country is ${home}; import them there` }]));
      else if (isConflict(match)) outcomes.set(row.index, refusal(row, [match]));
      else {
        outcomes.set(row.index, { index: row.index, outcome: 'recorded' });
        if ('found' in match && match.bindExternalId) ledger.people.push({ email: match.found.email!, external_id: match.bindExternalId });
        if ('found' in match && match.bindEmail) ledger.people.push({ email: match.bindEmail, external_id: match.found.external_id });
        if ('newcomer' in match && !introduced.has(match.newcomer)) {
          introduced.add(match.newcomer);
          ledger.people.push({ email: match.newcomer.email!, external_id: match.newcomer.external_id });
        }
      }
    }
    for (const row of fresh) {
      if (row.idempotencyKey && outcomes.get(row.index)?.outcome === 'recorded') ledger.keys.push({ idempotency_key: row.idempotencyKey, fingerprint: row.fingerprint });
    }
    settleRepeatedKeys(rows, firstOfKey, outcomes);
    return { outcomes: rows.map((row) => outcomes.get(row.index)!), ledger };
  }

  /** The rows' idempotency keys this application used before, with their records and body fingerprints. */
  private async earlierKeys(applicationId: string, rows: CheckedRow[]): Promise<Map<string, EarlierKey>> {
    const keys = [...new Set(rows.flatMap((row) => (row.idempotencyKey ? [row.idempotencyKey] : [])))];
    if (keys.length === 0) return new Map();
    return new Map((await STATEMENTS.earlierKeys.rows(this.dataSource, [applicationId, keys])).map((row) => [row.idempotency_key, row]));
  }

  /**
   * A batch whose people are all new, in one statement without a transaction of its own: the
   * people, their records and the records' events. Nobody else can hold a record of a person this
   * batch creates, so there is no predecessor to look up and no per-person lock to take (a row
   * that supersedes another row of the batch puts its withdrawal marks on that row's insert).
   * Answers undefined, having written nothing, when that does not hold: another batch recorded one
   * of these people since they were looked up (the subjects' unique index refuses the whole
   * statement), or PostgreSQL ended the statement as a deadlock's victim; the transaction then
   * writes the batch.
   */
  private async recordNewPeople(
    applicationId: string,
    flow: BatchFlow,
    homed: CheckedRow[],
    people: Map<number, Person | string | SubjectConflict>,
    newPeople: Person[],
    whileActive: boolean,
  ): Promise<Planned | undefined> {
    if (newPeople.length === 0) return undefined;
    // Nobody recorded before the batch: every withdrawal it plans is of its own records.
    const planned = this.plan(applicationId, flow, homed, people, new Map());
    const insert = this.statement(this.newPeopleWithRecords, whileActive, insertNewPeopleWithRecords);
    let inserted: number;
    try {
      ({ rowCount: inserted } = await insert.run(this.dataSource, [...recordsParameters(applicationId, flow, planned), PEOPLE_ROWS.document(newPeople)]));
    } catch (error) {
      // Or ended as a deadlock's victim (two batches giving their new people each other's external
      // ids in opposite orders): it wrote nothing, and the transaction decides those people again.
      if (isSubjectConflict(error as { code?: string; constraint?: string }) || isDeadlock(error as { code?: string })) return undefined;
      throw error;
    }
    // No event inserted: the version is no longer active, and the statement wrote nothing.
    if (whileActive && inserted === 0) throw new StaleFlowVersion(flow.id);
    return planned;
  }

  /**
   * Keeps the identifiers `binds` give people found by the other one, in the batch's transaction:
   * each column is set only while it is still empty. When another writer committed an identifier
   * for one of them first (the update finds the column set and skips the person), or gave the
   * identifier to someone else (the subjects' unique index, met once that writer commits), the bind
   * is void and BindRaced undoes the whole transaction: the batch is decided again (record), so no
   * row is recorded as if its identifier had been kept. Only a batch that binds comes here.
   */
  private async bind(manager: EntityManager, applicationId: string, binds: Person[]): Promise<void> {
    const byKind = [
      { statement: STATEMENTS.bindExternalIds, people: binds.filter((person) => person.bindExternalId !== undefined), value: (person: Person) => person.bindExternalId },
      { statement: STATEMENTS.bindEmails, people: binds.filter((person) => person.bindEmail !== undefined), value: (person: Person) => person.bindEmail },
    ];
    for (const { statement, people, value } of byKind) {
      if (people.length === 0) continue;
      let kept: Array<{ id: string }>;
      try {
        kept = await statement.rows(manager, [applicationId, people.map((person) => person.id), people.map(value)]);
      } catch (error) {
        if (isSubjectConflict(error as { code?: string; constraint?: string })) throw new BindRaced();
        throw error;
      }
      if (kept.length < new Set(people.map((person) => person.id)).size) throw new BindRaced();
    }
  }

  /**
   * A batch's transaction, run again when it lost a race with a batch written without locks (which
   * extended a chain between this one's read of the newest records and its insert, so the insert
   * broke UQ_consent_records_successor and undid the transaction; or the two deadlocked): each try
   * reads the newest records again under the locks. Such a race needs another write of the same
   * people in the same few milliseconds, so a few tries are enough; the last one's error is thrown.
   */
  private async retriedWhileRacing<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= RACE_TRIES || !isRaceLost(error as { code?: string; constraint?: string })) throw error;
      }
    }
  }

  /**
   * The batch planned against the people's newest records read before (`readBefore`) and written
   * on the condition that they still are: what it wrote, or undefined when it wrote nothing (a
   * newest record changed, or the version is no longer active). In a transaction holding the
   * people's locks (`on`), the statement checks them (LATEST_UNCHANGED). Without locks
   * (`extendingChains`: each person has a newest record, and the statement runs on its own), a
   * batch whose rows all supersede them needs no check: a newest record changes only by another
   * record superseding it, which makes the insert break UQ_consent_records_successor (thrown, see
   * isRaceLost); the check is still made when a row was decided before another row of the batch
   * (recorded late, it supersedes nothing). A row decided before a person's newest record read needs
   * the records around it (chains): without locks nothing is written (undefined) and the batch goes
   * through the transaction, which reads them under its locks.
   */
  private async writeAgainstLatestRead(
    on: EntityManager,
    applicationId: string,
    flow: BatchFlow,
    homed: CheckedRow[],
    people: Map<number, Person | string | SubjectConflict>,
    persons: Person[],
    readBefore: Map<string, Latest | null>,
    whileActive: boolean,
    extendingChains = false,
  ): Promise<Planned | undefined> {
    const latest = new Map(persons.flatMap((person): Array<[string, Latest]> => (readBefore.get(person.id) ? [[person.id, readBefore.get(person.id)!]] : [])));
    // A row decided before a person's newest record goes where it was made in their chain, read
    // under the batch's locks: without them (another writer may put a late row there meanwhile) the
    // batch goes through the transaction instead.
    if (extendingChains && lateFrom(homed, people, latest).size > 0) return undefined;
    // Without locks, the newest records read before are checked (and locked) as read, withdrawals
    // included (PREDECESSORS_UNCHANGED): taken before the plan, which works on the chains read.
    const predecessors = extendingChains ? [PREDECESSOR_ROWS.document([...latest.values()].map((newest) => ({ id: newest.recordId, marks: newest.withdrawals, version: newest.rowVersion })))] : [];
    const planned = this.plan(applicationId, flow, homed, people, await this.chains(on, flow.id, homed, people, latest));
    if (extendingChains && [...planned.made.values()].every((made) => made.supersededBy === undefined)) {
      const plain = this.statement(this.recordsWithEvents, whileActive, insertRecordsWithEvents, false, true);
      const { rowCount } = await plain.run(on, [...recordsParameters(applicationId, flow, planned), WITHDRAWAL_ROWS.document(planned.withdrawals), ...predecessors]);
      return rowCount > 0 ? planned : undefined;
    }
    const insert = this.statement(this.recordsWithEvents, whileActive, insertRecordsWithEvents, true, extendingChains);
    const { rowCount } = await insert.run(on, [
      ...recordsParameters(applicationId, flow, planned),
      WITHDRAWAL_ROWS.document(planned.withdrawals),
      LATEST_READ_ROWS.document(persons.map((person) => ({ subject: person.id, latest: readBefore.get(person.id)?.recordId ?? null }))),
      ...predecessors,
    ]);
    return rowCount > 0 ? planned : undefined;
  }

  private statement(
    made: Map<string, PreparedStatement>,
    whileActive: boolean,
    make: (dataSource: DataSource, whileActive: boolean, latestRead: boolean, predecessorsRead: boolean) => PreparedStatement,
    latestRead = false,
    predecessorsRead = false,
  ): PreparedStatement {
    const key = `${whileActive} ${latestRead} ${predecessorsRead}`;
    let statement = made.get(key);
    if (!statement) made.set(key, (statement = make(this.dataSource, whileActive, latestRead, predecessorsRead)));
    return statement;
  }

  /**
   * The people's chains of the flow as the batch's plan needs them (`on`, the write's connection):
   * each person's newest record (`latest`), and for a person with a row decided before it (late),
   * their records from the one captured at or before that row on, read now (a round trip for late
   * rows only).
   */
  private async chains(on: EntityManager, flowId: string, homed: CheckedRow[], people: Map<number, Person | string | SubjectConflict>, latest: Map<string, Latest>): Promise<Map<string, Link[]>> {
    const chains = new Map([...latest].map(([id, newest]): [string, Link[]] => [id, [linkOf(newest)]]));
    const from = lateFrom(homed, people, latest);
    if (from.size === 0) return chains;
    for (const id of from.keys()) chains.set(id, []);
    const rows = await STATEMENTS.chains.rows(on, [flowId, [...from.keys()], [...from.values()]]);
    const durations = await this.durations(flowId, rows.map((row) => row.flow_version), on);
    for (const row of rows) chains.get(row.subject_id)!.push(linkOf(latestOf(row, durations)));
    return chains;
  }

  /**
   * The records, events and withdrawals of a batch, given each person's chain of the flow as far as
   * it needs them (`chains`: their newest record, and the records around a late row; chains), each
   * row put into its person's chain where its decision was made (recordInChain), the rows of a
   * person in row order.
   */
  private plan(
    applicationId: string,
    flow: BatchFlow,
    homed: CheckedRow[],
    people: Map<number, Person | string | SubjectConflict>,
    chains: Map<string, Link[]>,
  ): Planned {
    const now = new Date();
    const recordedAt = now.toISOString();
    const planned: Planned = { recordedAt, records: [], events: [], withdrawals: [], made: new Map() };
    for (const row of homed) {
      const person = people.get(row.index) as Person;
      let chain = chains.get(person.id);
      if (!chain) chains.set(person.id, (chain = []));
      const recordId = newRecordId(this.context.env.COUNTRY);
      const status = recordStatus(row.purposes);
      const channel = row.channel ?? 'imported';
      // Who wrote it, for the audit trail: the person's browser committing a capture itself, else the
      // organisation (its server's Record API call, import, capture commit or form builder's webhook).
      const actor = channel.endsWith('_browser') ? { type: 'participant', id: person.id } : { type: 'application' };
      const capturedAt = Date.parse(row.capturedAt);
      const record: NewRecord = { recordId, person: person.id, row, status, supersedes: null, after: null, n: planned.records.length + 1, withdrawals: [] };
      const link: Link = { recordId, flowVersion: flow.version, purposes: row.purposes, withdrawals: record.withdrawals, capturedAt, lapsesAt: lapseOf(capturedAt, flow.consentDuration), own: record };
      // Where the decision was made in the person's chain: it supersedes the record made before it;
      // one decided before their newest record (an import of history, a form builder's late
      // delivery) is late, and the record made after it supersedes it at once, as if the two had
      // arrived in the order they were made. Equal times keep the order of arrival.
      const { predecessor, successor, withdrawals } = recordInChain(chain, link, recordedAt);
      const late = successor !== null;
      // The stored chain stays linear (UQ_consent_records_successor): a late record names no predecessor.
      if (!late && predecessor) {
        record.supersedes = predecessor.recordId;
        record.after = predecessor.recordedAt ?? null;
      }
      planned.records.push(record);
      const statuses = Object.fromEntries(Object.entries(row.purposes).map(([key, value]) => [key, value.status]));
      planned.events.push(
        outboxRow({
          type: status === 'granted' ? 'consent.granted' : 'consent.denied',
          applicationId,
          occurredAt: now,
          data: {
            record_id: recordId,
            kind: 'consent',
            outcome: status === 'granted' ? 'granted' : 'declined',
            flow_id: flow.id,
            flow_version: flow.version,
            subject: { id: person.id },
            purposes: statuses,
            channel,
            captured_at: row.capturedAt,
            recorded_at: recordedAt,
            ...(record.supersedes ? { supersedes: record.supersedes } : {}),
            ...(late ? { superseded_by: successor.recordId } : {}),
            ...(row.wordingVerdict ? { wording_verdict: row.wordingVerdict } : {}),
            ...(row.collectionPlatform ? { collection_platform: row.collectionPlatform } : {}),
            ...(row.renderingEvidence ? { rendering_evidence: row.renderingEvidence } : {}),
            ...(row.presentationStated ? { presentation_stated: row.presentationStated } : {}),
            actor,
          },
        }),
      );
      for (const withdrawal of withdrawals) {
        // Withdrawn from the predecessor (its own version, perhaps older than the batch's) or from this record.
        const withdrawnFrom = withdrawal.recordId === predecessor?.recordId ? predecessor : link;
        planned.events.push(recordWithdrawalEvent(withdrawal, { applicationId, flowId: flow.id, flowVersion: withdrawnFrom.flowVersion, subjectId: person.id, occurredAt: now, actor }));
      }
      planned.made.set(row.index, { recordId, subjectId: person.id, status, recordedAt, supersedes: record.supersedes, ...(late ? { supersededBy: successor.recordId } : {}) });
    }
    // The marks added to records written before the batch (its own records are inserted with theirs).
    for (const chain of chains.values()) {
      for (const link of chain) {
        if (!link.own && link.withdrawals.length > link.marksBefore!) planned.withdrawals.push({ recordId: link.recordId, marks: link.withdrawals.slice(link.marksBefore) });
      }
    }
    return planned;
  }

  /**
   * Each row's person: found, or new (and homed here), or the country they are homed in. A new
   * person of an e-mail-only row whom the directory has homed here already (`claimed`) takes the id
   * they were homed under, without another round.
   */
  private async people(
    applicationId: string,
    rows: CheckedRow[],
    knownAlready?: KnownPerson[],
    claimed?: Map<string, string>,
    homing: Person[] = [],
  ): Promise<Map<number, Person | string | SubjectConflict>> {
    const emails = [...new Set(rows.map((row) => row.email))];
    const externalIds = [...new Set(rows.map((row) => row.externalId).filter((id): id is string => id !== undefined))];
    const known = knownAlready ?? (await STATEMENTS.knownPeople.rows(this.dataSource, [applicationId, emails, externalIds]));
    // New people by e-mail address once the directory was asked about them: the same person (and id) in every round.
    const registered = new Map<string, { person: Person; externalId: string | null }>();
    /** Rows whose new person the directory homes in another country: that country. */
    const elsewhere = new Map<number, string>();
    let result = new Map<number, Person | string | SubjectConflict>();
    // A new person homed in another country writes nothing here, so the rows after theirs are decided
    // again without them (their e-mail address and external id then name no one here), as the rows
    // would be if sent one by one; a person that decision newly introduces is asked about in turn.
    for (let round = 0; round < MATCH_ROUNDS; round++) {
      const matches = matchPeople(
        rows.filter((row) => !elsewhere.has(row.index)),
        known,
      );
      result = new Map();
      const newcomers = new Map<KnownPerson, Person>();
      const toRegister: Person[] = [];
      // One object per person found, so an external id kept for them is seen by every row of theirs.
      const foundPeople = new Map<string, Person>();
      for (const row of rows) {
        const home = elsewhere.get(row.index);
        if (home !== undefined) {
          result.set(row.index, home);
          continue;
        }
        const match = matches.get(row.index)!;
        if (isConflict(match)) {
          result.set(row.index, match);
          continue;
        }
        if ('found' in match) {
          const { found, bindExternalId, bindEmail } = match;
          let person = foundPeople.get(found.id);
          if (!person) foundPeople.set(found.id, (person = { id: found.id, email: found.email, externalId: found.external_id, isNew: false }));
          if (bindExternalId) person.bindExternalId = bindExternalId;
          if (bindEmail) person.bindEmail = bindEmail;
          result.set(row.index, person);
          continue;
        }
        let person = newcomers.get(match.newcomer);
        if (!person) {
          const { email, external_id: externalId } = match.newcomer;
          const before = registered.get(email!);
          if (before) {
            person = before.person;
            person.externalId = externalId;
            // Given an external id only now: the directory learns its reference too.
            if (externalId !== before.externalId) toRegister.push(person);
          } else {
            // Homed under an id already (knownAndClaimed) only by the reference of an e-mail address alone.
            const homedAs = externalId ? undefined : claimed?.get(email!);
            person = { id: homedAs ?? newSubjectId(this.context.env.COUNTRY), email, externalId, isNew: true };
            if (!homedAs) toRegister.push(person);
            else registered.set(email!, { person, externalId: null });
          }
          newcomers.set(match.newcomer, person);
        }
        result.set(row.index, person);
      }
      if (toRegister.length === 0) break;
      // Homed by this batch, for a release should its write fail (record): each registration as it was
      // made (a person given an external id in a later round is registered again, and the same object
      // then names that id: the first registration did not register it).
      homing.push(...toRegister.map((person) => ({ ...person })));
      const homes = await firstValueFrom(
        this.clients.own.send<RegisterManyReply, RegisterManyRequest>(RESIDENCY_REGISTER_MANY, {
          subjects: toRegister.map((person) =>
            this.subjects.newPersonReferences(applicationId, { email: person.email ?? undefined, externalId: person.externalId ?? undefined }),
          ),
        }),
      );
      const homedElsewhere = new Map<Person, string>();
      toRegister.forEach((person, i) => {
        registered.set(person.email!, { person, externalId: person.externalId });
        const home = homes.home_countries[i];
        if (home !== this.context.env.COUNTRY) homedElsewhere.set(person, home);
      });
      if (homedElsewhere.size === 0) break;
      // Not homed here, so not the batch's to release (their rows answer the home country); an earlier
      // round's registration of the same person goes with them (a release short, never one too many).
      const elsewhereIds = new Set([...homedElsewhere.keys()].map((person) => person.id));
      homing.splice(0, homing.length, ...homing.filter((person) => !elsewhereIds.has(person.id)));
      for (const [index, person] of result) {
        const home = typeof person === 'string' || isConflict(person) ? undefined : homedElsewhere.get(person);
        if (home !== undefined) {
          elsewhere.set(index, home);
          result.set(index, home);
        }
      }
    }
    return result;
  }

  /** The directory reference of the identifier a binding gives a person (bindExternalId or bindEmail), and its field. */
  private boundReference(applicationId: string, person: Person): { reference: string; field: 'subject.external_id' | 'subject.email' } {
    if (person.bindExternalId !== undefined) {
      return { reference: this.subjects.newPersonReferences(applicationId, { externalId: person.bindExternalId }).references[0], field: 'subject.external_id' };
    }
    return { reference: this.subjects.newPersonReferences(applicationId, { email: person.bindEmail }).references[0], field: 'subject.email' };
  }

  /**
   * The people whose new identifier the directory homes in another country, with its field: there
   * it names another person (this one is homed here), so keeping it would make one identifier name
   * two people in two countries. Asks with the opaque references only.
   */
  private async bindingsHomedElsewhere(applicationId: string, people: Person[]): Promise<Map<Person, BindField>> {
    const taken = new Map<Person, BindField>();
    for (let start = 0; start < people.length; start += 1000) {
      const chunk = people.slice(start, start + 1000);
      const bound = chunk.map((person) => this.boundReference(applicationId, person));
      const { homes } = await firstValueFrom(
        this.clients.own.send<LocateManyReply, LocateManyRequest>(RESIDENCY_LOCATE_MANY, { people: bound.map(({ reference }) => ({ references: [reference] })) }),
      );
      chunk.forEach((person, i) => {
        if (homes[i] && homes[i] !== this.context.env.COUNTRY) taken.set(person, bound[i].field);
      });
    }
    return taken;
  }

  /**
   * The identifiers about to be kept for people found by the other one, as references of the
   * directory (the reference the person is known by first, so their known home decides), so a
   * request naming the person by the new one in another country is answered with their home.
   * Answers the people whose identifier a peer claimed first, by the field it is given on.
   */
  private async registerBindings(applicationId: string, people: Person[]): Promise<Map<Person, BindField>> {
    const { home_countries: homes } = await firstValueFrom(
      this.clients.own.send<RegisterManyReply, RegisterManyRequest>(RESIDENCY_REGISTER_MANY, {
        subjects: people.map((person) => {
          const { references } = this.subjects.newPersonReferences(applicationId, {
            email: person.bindEmail ?? person.email ?? undefined,
            externalId: person.bindExternalId ?? person.externalId ?? undefined,
          });
          // newPersonReferences lists the external id's reference first: the known one goes first.
          return { references: person.bindExternalId !== undefined ? [...references].reverse() : references };
        }),
      }),
    );
    // Answered another country: a peer claimed the new identifier first (residency-router
    // registerMany), so it names someone there.
    return new Map(
      people.flatMap((person, i) => (homes[i] !== this.context.env.COUNTRY ? [[person, person.bindExternalId !== undefined ? 'subject.external_id' : 'subject.email'] as const] : [])),
    );
  }

  private async latest(manager: EntityManager, subjectIds: string[], flowId: string): Promise<Map<string, Latest>> {
    if (subjectIds.length === 0) return new Map();
    const rows = await STATEMENTS.latest.rows(manager, [subjectIds, flowId]);
    const durations = await this.durations(flowId, rows.map((row) => row.flow_version), manager);
    return new Map(rows.map((row) => [row.subject_id, latestOf(row, durations)]));
  }

  /**
   * The consent term (`consent_duration`) of each of `versions` of a flow, read once per version and
   * kept: records are written only against active versions, and an active version's terms never
   * change (a draft's do, but no record names a draft).
   */
  private async durations(flowId: string, versions: number[], on: EntityManager | DataSource = this.dataSource): Promise<Map<number, string | null>> {
    const found = new Map<number, string | null>();
    const missing: number[] = [];
    for (const version of new Set(versions)) {
      const key = `${flowId}@${version}`;
      if (this.versionDurations.has(key)) found.set(version, this.versionDurations.get(key)!);
      else missing.push(version);
    }
    if (missing.length === 0) return found;
    const rows: Array<{ version: number; consent_duration: string | null }> = await on.query(VERSION_DURATIONS, [flowId, missing]);
    for (const row of rows) {
      this.versionDurations.set(`${flowId}@${row.version}`, row.consent_duration);
      found.set(row.version, row.consent_duration);
    }
    return found;
  }
}
