import { Inject, Injectable } from '@nestjs/common';
import { InboxRecordMessage, InboxRecordsPage, InboxRecordsRequest, InboxWithdrawReply, InboxWithdrawRequest } from '@dcr/contracts';
import { assertTransition, consentLapsesAt, consentStatusOf, DecisionStatus, DomainError, FlowTerms, hostedDecisionHistory, notFound, outcomesAfterWithdrawal, recordsPageAfter, recordsPageCursor, recordsPageList, stillInForceOnReplaced, withdrawsAllInForce, wrongCountry } from '@dcr/domain';
import { leadingWithin, SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource, EntityManager } from 'typeorm';
import { InboxService } from '../inbox/inbox.service';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { DecisionSession } from '../sessions/decision-session.entity';
import { decidedConsents, recordSessionPurposeRevoked, recordSessionRevoked, recordTransition, sessionPurposeWithdrawal, sessionRevocation } from '../sessions/session-events';
import { SessionsRepository } from '../sessions/sessions.repository';
import { SubjectsService } from '../subjects/subjects.service';
import { ConsentRecord } from './consent-record.entity';
import { madeAfter, madeOrder } from './record-order';

interface Row {
  record_id: string;
  application_id: string;
  flow_id: string;
  /** The flow version the record was decided under (its events name it). */
  flow_version: number;
  subject_id: string;
  recorded_at: Date;
  captured_at: Date;
  channel: string;
  purposes: ConsentRecord['purposes'];
  withdrawals: ConsentRecord['withdrawals'];
  terms: FlowTerms;
  /** The person's next record of the same flow (by when each decision was made), if any: this one is history. */
  superseded_by: string | null;
  /** The purposes the newer records of the same flow hold (null: none newer). */
  newer_purposes: string[] | null;
}

/** What every listed record starts with, whichever way it was given. */
function recordHead(row: { record_id: string; application_id: string; flow_id: string; terms: FlowTerms }): Pick<InboxRecordMessage, 'record_id' | 'application_id' | 'flow_id' | 'title'> {
  return { record_id: row.record_id, application_id: row.application_id, flow_id: row.flow_id, title: row.terms.title ?? row.terms.name };
}

/** A consent the person gave on the hosted pages (a decision session), as the records page shows it. */
interface SessionRow {
  /** The session's public id (the row keeps no token). */
  id: string;
  record_id: string;
  application_id: string;
  flow_id: string;
  status: string;
  completed_at: Date;
  /** When the session last changed: its revocation, once revoked (a revoked session changes no more). */
  updated_at: Date;
  purpose_decisions: Record<string, boolean> | null;
  /** The purposes the person withdrew one at a time (DecisionSession.withdrawals). */
  withdrawals: DecisionSession['withdrawals'];
  terms: FlowTerms;
}

/** Withdrawing what is not granted: a 409 naming the purpose asked for, or the record when none was (everything). */
function notGranted(purpose: string | undefined): DomainError {
  return purpose !== undefined
    ? new DomainError('conflict', `${purpose} is not granted on this record`, [{ field: 'purpose', reason: 'not granted on this record (withdrawn, declined, or a purpose that takes no consent)' }])
    : new DomainError('conflict', 'Nothing on this record is granted any more', [{ field: 'record_id', reason: 'nothing on this record is granted any more' }]);
}

/** The records of the same person and flow made after this one ($1), oldest first, with their purposes: read in a statement of its own (after the withdrawal's locks). */
const NEWER_RECORDS_OF_FLOW = `SELECT n."record_id", ARRAY(SELECT jsonb_object_keys(n."purposes")) AS "purposes" FROM "decisions"."consent_records" r
  JOIN "decisions"."consent_records" n ON ${madeAfter('n', 'r')}
  WHERE r."record_id" = $1
  ORDER BY ${madeOrder('n')}`;

/**
 * A time as a records page position (recordsPagePosition) from the database: ISO 8601 UTC to the
 * microsecond it keeps, so that a cursor names the record exactly and positions compare as text.
 */
const POSITION_TIME = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Two records page positions compared part by part (each part's text compares as its value does). */
function comparePositions(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/**
 * The person's side of their consent records: signed in to their inbox with a mailed one-time code
 * (the credential-free entry every receipt names), they see each record of that organisation (or of
 * every organisation) in this country and withdraw all of it or one purpose; a record a newer one of
 * the same flow replaced is shown as such and withdrawn through the newer one. A withdrawal appends
 * to the record, never rewrites it, and goes out as `consent.revoked` or `consent.purpose_revoked`
 * with the channel it was made from (onto the receipt, the audit trail and the webhooks):
 * `receipt_link` or `email_link` when the receipt's or the receipt mail's link brought the person to
 * their records (the page passes it on), else `own_records`.
 *
 * Consents given on the hosted pages (decision sessions signed in with the same address, whose
 * receipts name the same page) are listed too and withdrawn the same way, all or one purpose: a
 * purpose withdrawn while others stay given is a mark on the session (`withdrawals`) and goes out as
 * `consent.purpose_revoked`; withdrawing everything still given (all of it, or the last purpose by
 * name) revokes the session, as its session token would, and `consent.revoked` goes out with that
 * channel, scoped by purpose (`scope: 'purpose'`) while a noticed legitimate-interest purpose of it
 * stands, after a purpose was withdrawn on its own, or when the person named the purpose, as a
 * record's withdrawal is.
 */
@Injectable()
export class PersonRecords {
  constructor(
    private readonly dataSource: DataSource,
    private readonly inbox: InboxService,
    private readonly relay: OutboxRelay,
    private readonly sessions: SessionsRepository,
    private readonly subjects: SubjectsService,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  /**
   * One page of the person's records here, newest given first (recordsPagePosition: when the person
   * gave them, not when an import recorded them), after the cursor's position: only the page is
   * read (the records and hosted consents just after it, each source in that order), with what each
   * listed record needs of its chain (its successor, whether a newer record holds each purpose). The
   * page holds at most `limit` records, fewer when they would not fit one message, and names the next.
   * One organisation's (`application_id`), when none is here: if the directory homes the person in
   * another country for that organisation, their records are there, and the answer is that country
   * only (`wrong_country`, `home_country`); the directory is asked with the keyed references alone,
   * and nothing of the person crosses.
   */
  async list(request: InboxRecordsRequest): Promise<InboxRecordsPage> {
    const list = recordsPageList(request.application_id);
    const after = recordsPageAfter(request.cursor, list);
    const email = await this.inbox.emailOf(request.inbox_token);
    const manager = this.dataSource.manager;
    const [rows, sessions] = await Promise.all([this.pageRows(manager, email, request.application_id, after, request.limit + 1), this.sessionRows(manager, email, request.application_id, undefined, false, after, request.limit + 1)]);
    if (request.application_id && !after && rows.length === 0 && sessions.length === 0) {
      const home = await this.subjects.homeOf(request.application_id, { email });
      if (home && home !== this.context.env.COUNTRY) throw wrongCountry(home);
    }
    const listed = [
      ...rows.map(({ captured_key, recorded_key, ...row }) => ({ position: [captured_key, recorded_key, row.record_id] as [string, string, string], message: this.message(row) })),
      ...sessions.map(({ completed_key, ...row }) => ({ position: [completed_key, completed_key, row.record_id] as [string, string, string], message: this.sessionMessage(row) })),
    ].sort((a, b) => comparePositions(b.position, a.position));
    const page = leadingWithin(listed.slice(0, request.limit).map(({ message }) => message));
    const last = listed[page.length - 1];
    return { data: page, next_cursor: listed.length > page.length ? recordsPageCursor(list, last.position) : null };
  }

  async withdraw(request: InboxWithdrawRequest): Promise<InboxWithdrawReply> {
    const email = await this.inbox.emailOf(request.inbox_token);
    const result = await this.dataSource.transaction(async (manager) => {
      const [found] = await this.rows(manager, email, undefined, request.record_id);
      if (!found) return this.withdrawSession(manager, email, request);
      // The person's chain of the flow, as the record writer locks it (its transaction), then the
      // record itself (a writer without locks holds it FOR SHARE while it writes a newer record:
      // ImportBatch PREDECESSORS_UNCHANGED), then whether a newer record came meanwhile, read after
      // both locks: a newer record is either seen here (409), or written after this commits, reading
      // this withdrawal and carrying it.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`records:${found.subject_id}:${found.flow_id}`]);
      const [row] = await this.rows(manager, email, undefined, request.record_id, true);
      const newer: Array<{ record_id: string; purposes: string[] }> = await manager.query(NEWER_RECORDS_OF_FLOW, [row.record_id]);
      row.superseded_by = newer[0]?.record_id ?? null;
      row.newer_purposes = newer.length > 0 ? newer.flatMap((record) => record.purposes) : null;
      const current = this.message(row).purposes;
      const granted = Object.entries(current).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => key);
      if (request.purpose !== undefined && !Object.hasOwn(current, request.purpose)) {
        throw new DomainError('validation_failed', 'The request did not pass validation', [{ field: 'purpose', reason: 'not a purpose of this record' }]);
      }
      // A newer record of the same flow speaks for the person now: withdrawing from the old one would
      // leave the newer one granting what the person meant to take back. What no newer record holds
      // (a newer flow version dropped it) is still given through this one, and withdrawn here.
      const withdrawable = row.superseded_by ? stillInForceOnReplaced(current, row.newer_purposes ?? []) : granted;
      if (row.superseded_by && (request.purpose === undefined ? withdrawable.length === 0 : !withdrawable.includes(request.purpose))) {
        // The newest record of the chain is the one to withdraw on (the next one may be replaced too).
        const newest = newer[newer.length - 1].record_id;
        const reason = newest === row.superseded_by ? `superseded by ${newest}` : `superseded by ${row.superseded_by}, itself replaced: the newest record is ${newest}`;
        throw new DomainError('conflict', `This record was replaced by a newer one (${newest}); withdraw there`, [{ field: 'record_id', reason }]);
      }
      const withdrawn = request.purpose === undefined ? withdrawable : withdrawable.filter((key) => key === request.purpose);
      if (withdrawn.length === 0) {
        throw notGranted(request.purpose);
      }
      const at = new Date();
      const channel = request.channel ?? 'own_records';
      const whole = withdrawn.length === granted.length;
      // A mark of the whole record only when the person withdrew everything and nothing the record's
      // receipt lists stays in force (a noticed legitimate-interest purpose stands): else one per purpose.
      const wholeRecord = whole && request.purpose === undefined && withdrawsAllInForce(row.purposes, withdrawn);
      const marks = wholeRecord ? [{ at: at.toISOString(), channel }] : withdrawn.map((purpose) => ({ purpose, at: at.toISOString(), channel }));
      await manager.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" || $2::jsonb WHERE "record_id" = $1`, [row.record_id, JSON.stringify(marks)]);
      if (newer.length > 0) {
        // Withdrawn on a replaced record (what no newer record holds): the flow's newest record keeps
        // the same marks, purpose by purpose, for a purpose it does not hold (nothing of it changes,
        // no event): a record written after it, captured before this withdrawal, carries them, as it
        // carries what is withdrawn on the newest record itself (carriedWithdrawals).
        const perPurpose = withdrawn.map((purpose) => ({ purpose, at: at.toISOString(), channel }));
        await manager.query(`UPDATE "decisions"."consent_records" SET "withdrawals" = "withdrawals" || $2::jsonb WHERE "record_id" = $1`, [newer[newer.length - 1].record_id, JSON.stringify(perPurpose)]);
      }
      await recordEvent(manager, {
        type: whole ? 'consent.revoked' : 'consent.purpose_revoked',
        applicationId: row.application_id,
        occurredAt: at,
        data: {
          record_id: row.record_id,
          flow_id: row.flow_id,
          // The version the record was decided under, as its consent.granted names it.
          flow_version: row.flow_version,
          subject: { id: row.subject_id },
          // Each purpose's outcome on the record now (as consent.granted carries them), and the
          // purposes this withdrew, also when that is all of them (consent.revoked), as a newer record's withdrawal says.
          purposes: outcomesAfterWithdrawal(Object.fromEntries(Object.entries(current).map(([key, purpose]) => [key, { status: purpose.status }])), withdrawn),
          withdrawn,
          // Nothing stays given but the withdrawal is by purpose (the person named the last one given,
          // or a noticed purpose stands): consent.revoked, scoped, as the record's marks are (the
          // receipt's `consent withdrawn` then names each purpose).
          ...(whole && !wholeRecord ? { scope: 'purpose' } : {}),
          channel,
          // When the person withdrew, as the answer says and every other withdrawal of a record's event does.
          withdrawn_at: at.toISOString(),
          actor: { type: 'participant', id: row.subject_id },
        },
      });
      const [after] = await this.rows(manager, email, undefined, row.record_id);
      return { record_id: row.record_id, withdrawn, withdrawn_at: at.toISOString(), record: this.message(after) };
    });
    this.relay.kick();
    return result;
  }

  /**
   * A consent given on the hosted pages, withdrawn all or one purpose: a purpose while others stay
   * given is a mark on the session (the session stays fulfilled; `consent.purpose_revoked`);
   * everything still given, or the last purpose by name, revokes the session, as its session token
   * would (`consent.revoked`).
   */
  private async withdrawSession(manager: EntityManager, email: string, request: InboxWithdrawRequest): Promise<InboxWithdrawReply> {
    const [row] = await this.sessionRows(manager, email, undefined, request.record_id, true);
    if (!row) throw notFound('Record');
    const before = this.sessionMessage(row);
    const granted = Object.entries(before.purposes).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => key);
    if (request.purpose !== undefined && !Object.hasOwn(before.purposes, request.purpose)) {
      throw new DomainError('validation_failed', 'The request did not pass validation', [{ field: 'purpose', reason: 'not a purpose of this record' }]);
    }
    if (granted.length === 0) throw notGranted(undefined);
    if (request.purpose !== undefined && !granted.includes(request.purpose)) throw notGranted(request.purpose);
    const session = await manager.findOneOrFail(DecisionSession, { where: { id: row.id } });
    const at = new Date();
    const channel = request.channel ?? 'own_records';
    const actor = { type: 'participant' as const, ...(session.subjectId ? { id: session.subjectId } : {}) };
    if (request.purpose !== undefined && granted.length > 1) {
      // One purpose of several: appended to the session, which stays fulfilled (what the person decided is not rewritten).
      const withdrawal = sessionPurposeWithdrawal(row.terms, session, [request.purpose]);
      session.withdrawals = [...session.withdrawals, { purpose: request.purpose, at: at.toISOString(), channel }];
      session.updatedAt = at;
      await this.sessions.save(manager, session);
      await recordSessionPurposeRevoked(manager, session, at, { ...withdrawal, channel, withdrawn_at: at.toISOString(), actor });
      return { record_id: row.record_id, withdrawn: [request.purpose], withdrawn_at: at.toISOString(), record: this.sessionMessage({ ...row, withdrawals: session.withdrawals, updated_at: at }) };
    }
    assertTransition(session.status as DecisionStatus, 'revoked', session.path);
    const from = session.status;
    session.status = 'revoked';
    session.updatedAt = at;
    await this.sessions.save(manager, session);
    await recordTransition(manager, session, from, 'revoked', actor, at);
    // Scoped by purpose while a noticed legitimate-interest purpose stands, after a purpose was
    // withdrawn on its own, or when the person named the last purpose given (as a record's), so the
    // receipt's `consent withdrawn` names each purpose and does not read the legitimate interest as withdrawn.
    // When the person withdrew, as the answer says and every withdrawal of a record's event does.
    const revocation = sessionRevocation(row.terms, session);
    await recordSessionRevoked(manager, session, at, { ...revocation, ...(request.purpose !== undefined ? { scope: 'purpose' } : {}), channel, withdrawn_at: at.toISOString(), actor });
    return { record_id: row.record_id, withdrawn: granted, withdrawn_at: at.toISOString(), record: this.sessionMessage({ ...row, status: 'revoked', updated_at: at }) };
  }

  /**
   * The person's completed consents on the hosted pages (signed in with this address), with the flow
   * version they answered, newest first; after a records page position and at most `limit`, for a page.
   */
  private sessionRows(manager: EntityManager, email: string, applicationId?: string, recordId?: string, lock = false, after?: readonly [string, string, string], limit?: number): Promise<Array<SessionRow & { completed_key: string }>> {
    const params: unknown[] = [email, applicationId ?? null, recordId ?? null];
    const bind = (value: unknown) => `$${params.push(value)}`;
    return manager.query(
      `SELECT s."id", s."record_id", s."application_id", s."flow_id", s."status", s."completed_at", s."updated_at", s."purpose_decisions", s."withdrawals", f."terms",
              ${POSITION_TIME('s."completed_at"')} AS "completed_key"
         FROM "decisions"."decision_sessions" s
         JOIN "decisions"."flow_versions" f ON f."id" = s."flow_id" AND f."version" = s."flow_version"
        WHERE s."subject_email" = $1 AND s."signed_in_at" IS NOT NULL AND s."kind" = 'consent' AND s."record_id" IS NOT NULL
          AND s."status" IN ('fulfilled', 'revoked')
          AND ($2::text IS NULL OR s."application_id" = $2) AND ($3::text IS NULL OR s."record_id" = $3)
          ${after ? `AND (s."completed_at", s."completed_at", s."record_id") < (${bind(after[0])}::timestamptz, ${bind(after[1])}::timestamptz, ${bind(after[2])})` : ''}
        ORDER BY s."completed_at" DESC, s."record_id" DESC
        ${limit !== undefined ? `LIMIT ${bind(limit)}` : ''}
        ${lock ? 'FOR UPDATE OF s' : ''}`,
      params,
    );
  }

  /**
   * A hosted consent as a record: its consent purposes, each given or declined (withdrawn once the
   * session is revoked). A legitimate-interest purpose (objected to or noticed) and the notice-only
   * purposes have nothing to withdraw and are left out here (sessions completed before
   * `purpose_outcomes` was kept cannot tell them apart anyway); the receipt and consent_status have them.
   * A purpose the person withdrew on its own reads withdrawn from then on.
   */
  private sessionMessage(row: SessionRow): InboxRecordMessage {
    const decided = row.purpose_decisions ?? {};
    const consents = decidedConsents(row.terms, decided);
    // Where each stands as consent_status weighs a hosted consent (hostedDecisionHistory): withdrawn
    // at its revocation, and expired once its term (completion plus consent_duration) ran out first.
    const status = consentStatusOf([
      hostedDecisionHistory({
        record_id: row.record_id,
        completed_at: row.completed_at,
        status: row.status,
        revoked_at: row.status === 'revoked' ? row.updated_at : null,
        purpose_outcomes: null,
        purpose_decisions: decided,
        withdrawals: row.withdrawals,
        terms: row.terms,
      }),
    ]);
    return {
      ...recordHead(row),
      captured_at: new Date(row.completed_at).toISOString(),
      recorded_at: new Date(row.completed_at).toISOString(),
      channel: 'hosted',
      withdrawal: 'per_purpose',
      purposes: Object.fromEntries(consents.map((purpose) => [purpose.key, { label: purpose.label, status: status[purpose.key]?.status ?? 'declined' }])),
    };
  }

  /**
   * One page of the person's records (one organisation's with `applicationId`), newest given first,
   * after a position: each of the person's subjects gives its newest `limit` records after it (an
   * index in that order, IX_consent_records_person_page), and the newest `limit` of those are the
   * page. Each is read as rows() reads one, with what it needs of its chain found from the record
   * onwards (IX_consent_records_chain_order), whichever page the newer records are on: its successor
   * (the first record made after it), and which of its own purposes a newer record holds (enough for
   * stillInForceOnReplaced). The successor holds them but for a purpose a newer flow version
   * dropped: only such a purpose is looked for further up the chain (written as one EXISTS over the
   * newer records, the planner read all of them for every listed record). The whole history was read
   * for every page before (listing 2,000 records of one flow read them all for each page).
   */
  private pageRows(manager: EntityManager, email: string, applicationId: string | undefined, after: readonly [string, string, string] | undefined, limit: number): Promise<Array<Row & { captured_key: string; recorded_key: string }>> {
    const params: unknown[] = [email, applicationId ?? null, limit];
    const bind = (value: unknown) => `$${params.push(value)}`;
    const order = 'r."captured_at" DESC, r."recorded_at" DESC, r."record_id" DESC';
    return manager.query(
      `SELECT r."record_id", r."application_id", r."flow_id", r."flow_version", r."subject_id", r."recorded_at", r."captured_at", r."channel", r."purposes", r."withdrawals", f."terms",
              ${POSITION_TIME('r."captured_at"')} AS "captured_key", ${POSITION_TIME('r."recorded_at"')} AS "recorded_key",
              successor."record_id" AS "superseded_by",
              ARRAY(SELECT k FROM jsonb_object_keys(r."purposes") AS k
                     WHERE successor."record_id" IS NOT NULL
                       AND (successor."purposes" ? k OR EXISTS (SELECT 1 FROM "decisions"."consent_records" n WHERE ${madeAfter('n', 'r')} AND n."purposes" ? k))) AS "newer_purposes"
         FROM (SELECT r.* FROM "decisions"."subjects" s
                CROSS JOIN LATERAL (
                  SELECT r.* FROM "decisions"."consent_records" r
                   WHERE r."subject_id" = s."id" AND ($2::text IS NULL OR r."application_id" = $2)
                     ${after ? `AND (r."captured_at", r."recorded_at", r."record_id") < (${bind(after[0])}::timestamptz, ${bind(after[1])}::timestamptz, ${bind(after[2])})` : ''}
                   ORDER BY ${order}
                   LIMIT $3) r
               WHERE s."email" = $1
               ORDER BY ${order}
               LIMIT $3) r
         JOIN "decisions"."flow_versions" f ON f."id" = r."flow_id" AND f."version" = r."flow_version"
         LEFT JOIN LATERAL (SELECT n."record_id", n."purposes" FROM "decisions"."consent_records" n WHERE ${madeAfter('n', 'r')} ORDER BY ${madeOrder('n')} LIMIT 1) successor ON true
        ORDER BY ${order}`,
      params,
    );
  }

  private rows(manager: EntityManager, email: string, applicationId?: string, recordId?: string, lock = false): Promise<Row[]> {
    return manager.query(
      `SELECT r."record_id", r."application_id", r."flow_id", r."flow_version", r."subject_id", r."recorded_at", r."captured_at", r."channel", r."purposes", r."withdrawals", f."terms",
              (SELECT n."record_id" FROM "decisions"."consent_records" n WHERE ${madeAfter('n', 'r')} ORDER BY ${madeOrder('n')} LIMIT 1) AS "superseded_by",
              (SELECT array_agg(DISTINCT k) FROM "decisions"."consent_records" n CROSS JOIN LATERAL jsonb_object_keys(n."purposes") AS k
                WHERE ${madeAfter('n', 'r')}) AS "newer_purposes"
         FROM "decisions"."consent_records" r
         JOIN "decisions"."subjects" s ON s."id" = r."subject_id"
         JOIN "decisions"."flow_versions" f ON f."id" = r."flow_id" AND f."version" = r."flow_version"
        WHERE s."email" = $1 AND ($2::text IS NULL OR r."application_id" = $2) AND ($3::text IS NULL OR r."record_id" = $3)
        ORDER BY r."captured_at" DESC, r."recorded_at" DESC, r."record_id" DESC
        ${lock ? 'FOR UPDATE OF r' : ''}`,
      [email, applicationId ?? null, recordId ?? null],
    );
  }

  private message(row: Row): InboxRecordMessage {
    const expiresAt = consentLapsesAt(row.captured_at, row.terms.consent_duration);
    const status = consentStatusOf([
      { record_id: row.record_id, recorded_at: new Date(row.recorded_at).toISOString(), ...(expiresAt ? { expires_at: expiresAt } : {}), purposes: row.purposes, withdrawn: row.withdrawals },
    ]);
    const labels = new Map(row.terms.purposes.map((purpose) => [purpose.key, purpose.label]));
    return {
      ...recordHead(row),
      captured_at: new Date(row.captured_at).toISOString(),
      recorded_at: new Date(row.recorded_at).toISOString(),
      channel: row.channel,
      withdrawal: 'per_purpose',
      ...(row.superseded_by ? { superseded_by: row.superseded_by } : {}),
      ...(row.superseded_by && stillInForceOnReplaced(status, row.newer_purposes ?? []).length > 0 ? { withdrawable: stillInForceOnReplaced(status, row.newer_purposes ?? []) } : {}),
      purposes: Object.fromEntries(Object.entries(status).map(([key, value]) => [key, { label: labels.get(key) ?? key, status: value.status }])),
    };
  }
}
