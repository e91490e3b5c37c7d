import {
  consentLapsesAt,
  FlowTerms,
  HostedConsentDecision,
  hostedWithdrawalsByNewerRecords,
  NewerRecordDecision,
  RecordedPurpose,
  recordWithdrawalsByHostedDecision,
  SUPERSEDED_BY_NEWER_RECORD,
  WithdrawalMark,
} from '@dcr/domain';
import { JsonRecordset, PreparedStatement } from '@dcr/persistence';
import { insertOutboxRows, OutboxEvent, outboxRow } from '@dcr/service-kit';
import { EntityManager } from 'typeorm';
import { DecisionSession } from '../sessions/decision-session.entity';
import { sessionPurposeWithdrawal } from '../sessions/session-events';
import { recordWithdrawalEvent } from './record-withdrawal-events';

/**
 * A person's consents given on the hosted pages in one flow that still stand (fulfilled, not
 * revoked): the only ones a newer record of that flow can take something back from. `person` and
 * `application` are SQL expressions; IX_decision_sessions_subject_consents finds them.
 */
export function standingHostedConsentsSql(person: string, application: string, flow: string): string {
  return `SELECT s."id" FROM "decisions"."decision_sessions" s
    WHERE s."subject_id" = ${person} AND s."application_id" = ${application} AND s."flow_id" = ${flow}
      AND s."kind" = 'consent' AND s."record_id" IS NOT NULL AND s."status" = 'fulfilled'`;
}

type HostedConsentRow = HostedConsentDecision & { id: string; subject_id: string; flow_version: number; withdrawals: DecisionSession['withdrawals'] } & Record<string, unknown>;

/**
 * The standing hosted consents of people ($2) of an application ($1) in a flow ($3), locked (FOR
 * UPDATE, in id order) for the record batch's transaction: a withdrawal on the records page or a
 * revocation with the session token waits for it, and one made first is read.
 */
const HOSTED_CONSENTS = new PreparedStatement<HostedConsentRow>(
  'decisions_records_hosted_consents',
  `SELECT s."id", s."record_id", s."subject_id", s."flow_id", s."flow_version", s."completed_at", s."status", s."purpose_outcomes", s."purpose_decisions", s."withdrawals",
          jsonb_build_object('purposes', f."terms"->'purposes', 'consent_duration', f."terms"->'consent_duration') AS "terms"
     FROM "decisions"."decision_sessions" s
     JOIN "decisions"."flow_versions" f ON f."id" = s."flow_id" AND f."version" = s."flow_version"
    WHERE s."id" IN (${standingHostedConsentsSql('ANY($2::text[])', '$1', '$3')}) AND ($4::text IS NULL OR s."id" <> $4)
    ORDER BY s."id"
    FOR UPDATE OF s`,
  { reusePlan: false },
);

/** The marks a batch appends to hosted consents, as the JSON document their update reads. */
const MARK_ROWS = new JsonRecordset<{ id: string; marks: DecisionSession['withdrawals'] }>([
  { key: 'id', read: (row) => row.id },
  { key: 'marks', read: (row) => row.marks, type: 'jsonb' },
]);

const APPEND_MARKS = new PreparedStatement(
  'decisions_records_hosted_marks',
  `UPDATE "decisions"."decision_sessions" AS s SET "withdrawals" = s."withdrawals" || w."marks", "updated_at" = now()
     FROM jsonb_to_recordset($1::jsonb) AS w(${MARK_ROWS.columns}) WHERE s."id" = w."id"`,
);

/** A record a batch writes (or a hosted consent just decided), as what it may take back from the person's hosted consents needs it. */
export interface BatchRecord {
  recordId: string;
  person: string;
  capturedAt: string;
  purposes: Record<string, { status: string }>;
  channel: string;
  /** Who decided it, when not the writer its channel names (a hosted consent: the person). */
  actor?: { type: string; id?: string };
}

/**
 * In a record batch's transaction: what its records take back from the standing consents their
 * people gave on the hosted pages in the same flow (hostedWithdrawalsByNewerRecords: a record
 * decided after such a consent withdraws each purpose it still grants that the record holds and
 * does not grant, at the record's decision time, and objects to a legitimate interest it let stand
 * that the record objects to). Each is a mark on the session (channel `newer_record`), which stays
 * fulfilled, and goes out as `consent.purpose_revoked`, or `consent.revoked` (`scope: "purpose"`)
 * when nothing stays given, with `superseded_by` naming the record and `objected`, as a record's
 * withdrawal by a newer one does (also for an objection alone, `withdrawn: []`). `people`: whose
 * hosted consents to read (those recorded before the batch: a person it creates has none);
 * `except`: a session left out (the hosted consent whose completion takes back from the others).
 * Answers how many withdrawals it made.
 */
export async function withdrawFromHostedConsents(manager: EntityManager, applicationId: string, flowId: string, people: string[], records: BatchRecord[], except?: string): Promise<number> {
  if (people.length === 0 || records.length === 0) return 0;
  const sessions = await HOSTED_CONSENTS.rows(manager, [applicationId, people, flowId, except ?? null]);
  if (sessions.length === 0) return 0;
  const marks: Array<{ id: string; marks: DecisionSession['withdrawals'] }> = [];
  const events: OutboxEvent[] = [];
  for (const session of sessions) {
    const newer: NewerRecordDecision[] = records
      .filter((record) => record.person === session.subject_id)
      .map((record) => ({ record_id: record.recordId, captured_at: record.capturedAt, purposes: record.purposes }));
    const withdrawals = hostedWithdrawalsByNewerRecords(session, newer);
    if (withdrawals.length === 0) continue;
    const added: DecisionSession['withdrawals'] = [];
    for (const withdrawal of withdrawals) {
      const record = records.find((one) => one.recordId === withdrawal.record_id)!;
      const before = { purposeDecisions: session.purpose_decisions, withdrawals: [...session.withdrawals, ...added] };
      const outcome = sessionPurposeWithdrawal(session.terms as unknown as FlowTerms, before, withdrawal.withdrawn);
      // A mark for each purpose withdrawn, and for each legitimate interest objected to (no status
      // reads it: it keeps a later record from objecting again).
      added.push(...[...withdrawal.withdrawn, ...withdrawal.objected].map((purpose) => ({ purpose, at: withdrawal.at, channel: SUPERSEDED_BY_NEWER_RECORD })));
      const whole = withdrawal.remaining.length === 0;
      events.push(
        outboxRow({
          type: whole ? 'consent.revoked' : 'consent.purpose_revoked',
          applicationId,
          data: {
            session_id: session.id,
            record_id: session.record_id,
            superseded_by: withdrawal.record_id,
            flow_id: flowId,
            // The version the hosted consent answered, as its consent.granted names it.
            flow_version: session.flow_version,
            subject: { id: session.subject_id },
            purposes: { ...outcome.purposes, ...Object.fromEntries(withdrawal.objected.map((key) => [key, 'objected'])) },
            withdrawn: outcome.withdrawn,
            ...(withdrawal.objected.length > 0 ? { objected: withdrawal.objected } : {}),
            channel: SUPERSEDED_BY_NEWER_RECORD,
            // The newer record's decision: the receipt's `consent withdrawn` time.
            withdrawn_at: withdrawal.at,
            // The newer record's writer: the person's browser committing a capture, else the organisation.
            actor: record.actor ?? (record.channel.endsWith('_browser') ? { type: 'participant', id: session.subject_id } : { type: 'application' }),
            // By purpose: the marks name each purpose (a noticed legitimate interest of it stands, or is objected to).
            ...(whole ? { scope: 'purpose' } : {}),
          },
        }),
      );
    }
    marks.push({ id: session.id, marks: added });
  }
  if (marks.length === 0) return 0;
  await APPEND_MARKS.run(manager, [MARK_ROWS.document(marks)]);
  await insertOutboxRows(manager, events);
  return events.length;
}

/** A person's ($1) newest record of a flow ($2), with its flow version's consent term: the record a hosted decision after it supersedes. */
const NEWEST_RECORD = new PreparedStatement<{
  record_id: string;
  purposes: Record<string, RecordedPurpose>;
  withdrawals: WithdrawalMark[];
  captured_at: Date;
  flow_version: number;
  consent_duration: string | null;
}>(
  'decisions_hosted_newest_record',
  `SELECT r."record_id", r."purposes", r."withdrawals", r."captured_at", r."flow_version", f."terms"->>'consent_duration' AS "consent_duration"
     FROM (SELECT * FROM "decisions"."consent_records" WHERE "subject_id" = $1 AND "flow_id" = $2
            ORDER BY "captured_at" DESC, "recorded_at" DESC, "record_id" DESC LIMIT 1) r
     JOIN "decisions"."flow_versions" f ON f."id" = r."flow_id" AND f."version" = r."flow_version"`,
);

/**
 * A new version of a record, unchanged otherwise: a record written without locks against the
 * version it read (ImportBatch, PREDECESSORS_UNCHANGED) then fails its check, or, written first,
 * makes this wait for its commit.
 */
const TOUCH_RECORD = new PreparedStatement('decisions_hosted_touch_record', `UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" WHERE "record_id" = $1`);

const APPEND_RECORD_MARKS = new PreparedStatement('decisions_hosted_record_marks', `UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" || $2::jsonb WHERE "record_id" = $1`);

/**
 * In the transaction that completes a consent session naming a person: what the person's decision
 * there takes back from their older decisions of the same flow, as a newer record would. From their
 * newest record (recordWithdrawalsByHostedDecision: what it still grants that the person declined
 * now, and a legitimate interest it let stand that they object to now), as marks on the record and
 * `consent.purpose_revoked`/`consent.revoked` with `superseded_by` (the hosted consent's record),
 * channel `newer_record` and the person as actor; from their earlier standing hosted consents of
 * the flow, as a record does (withdrawFromHostedConsents). Under the person's and flow's lock
 * (`records:<person>:<flow>`), which record writers and the records page take, so a record written
 * meanwhile is read, or reads these marks. The Record API writes returning people's records without
 * that lock (ImportBatch's write without locks, checked against their newest records as read and
 * locked FOR SHARE): the newest record is updated (touched) before it is read for good, so such a
 * write either committed first (the touch waits for it, and the newest record is read again, until
 * it stays the same) or fails its check on the touched row and goes through the transaction, where
 * it reads this consent.
 */
export async function supersedeOlderDecisions(
  manager: EntityManager,
  session: Pick<DecisionSession, 'id' | 'applicationId' | 'subjectId' | 'flowId' | 'recordId'>,
  purposes: Record<string, RecordedPurpose>,
  decidedAt: Date,
): Promise<void> {
  if (!session.subjectId || !session.flowId || !session.recordId) return;
  const { subjectId, flowId, recordId, applicationId } = session;
  await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`records:${subjectId}:${flowId}`]);
  const at = decidedAt.toISOString();
  const actor = { type: 'participant', id: subjectId };
  let [newest] = await NEWEST_RECORD.rows(manager, [subjectId, flowId]);
  while (newest) {
    await TOUCH_RECORD.run(manager, [newest.record_id]);
    const [again] = await NEWEST_RECORD.rows(manager, [subjectId, flowId]);
    const settled = again?.record_id === newest.record_id;
    newest = again;
    if (settled) break;
  }
  if (newest) {
    const capturedAt = new Date(newest.captured_at).getTime();
    const lapsesAt = consentLapsesAt(newest.captured_at, newest.consent_duration);
    const link = { recordId: newest.record_id, purposes: newest.purposes, withdrawals: [...newest.withdrawals], capturedAt, ...(lapsesAt ? { lapsesAt: Date.parse(lapsesAt) } : {}) };
    const withdrawals = recordWithdrawalsByHostedDecision(link, { record_id: recordId, purposes }, at);
    if (withdrawals.length > 0) {
      await APPEND_RECORD_MARKS.run(manager, [newest.record_id, JSON.stringify(link.withdrawals.slice(newest.withdrawals.length))]);
      await insertOutboxRows(
        manager,
        withdrawals.map((withdrawal) => recordWithdrawalEvent(withdrawal, { applicationId, flowId, flowVersion: newest.flow_version, subjectId, occurredAt: decidedAt, actor })),
      );
    }
  }
  await withdrawFromHostedConsents(manager, applicationId, flowId, [subjectId], [{ recordId, person: subjectId, capturedAt: at, purposes, channel: 'hosted', actor }], session.id);
}
