import { addIsoDuration, parseIsoDuration } from '../flows/iso-duration';
import type { RecordedPurpose } from './attestation';

/*
 * Where each purpose stands for one person across their records of one flow (the `consent_status`
 * answer). Records are frozen; withdrawals are appended to a record and never alter it.
 *
 * Decisions made where the specification leaves room:
 * - Each purpose is decided by the newest record that holds it: the one whose decision was made last
 *   (`captured_at`, when the record says; a record captured earlier but recorded later, an import of
 *   history or a form builder's late delivery, does not overrule a newer decision), then the later
 *   `recorded_at` (the service's time), then the later one in the input. A record that does not hold a
 *   purpose (a newer flow version dropped it) leaves the older record in charge of it, as
 *   supersessionOf assumes.
 * - A withdrawal turns a granted purpose into `withdrawn` when it is whole or scoped to that purpose
 *   and either sits on the deciding record itself, or sits on another record of the same flow
 *   (`flow_id`) and happened at or after the deciding record's decision (its `captured_at`, else its
 *   `recorded_at`: a later decision re-affirms over an older withdrawal; a withdrawal made on the
 *   flow's newest record before a record captured earlier arrived still counts, and that record
 *   carries it too: carriedWithdrawals). A withdrawal on another flow's record never counts here: the
 *   person took back that flow's consent, and this record's receipt, records page and events still
 *   say granted. Nor does a withdrawal on a record count against a hosted consent (ownWithdrawalsOnly),
  which carries none. A withdrawal that a newer record made by superseding this one (channel
 *   `newer_record`) counts on its own record only: it is that newer decision, stamped when the
 *   service recorded it, and a decision made after it (even one recorded earlier than that stamp,
 *   an import of history or a back-dated capture) re-affirms. Only granted purposes can be
 *   withdrawn; `declined`, `objected` and `noticed` stay as recorded.
 * - A granted purpose whose deciding record has lapsed (`expires_at`: its capture plus the flow's
 *   consent duration, reached by `now`) is `expired`, unless a withdrawal applied by then (the
 *   receipt's `consent expired` follows the same rule).
 * - `updated_at` is the deciding record's `recorded_at`, for a withdrawn purpose the time of the
 *   earliest withdrawal that applies, for an expired one its `expires_at`. `record_id` is always the
 *   deciding record.
 * - Purposes are listed newest record first, each record in its own purpose order.
 */

export type ConsentStatusValue = 'granted' | 'declined' | 'withdrawn' | 'expired' | 'objected' | 'noticed';

export interface WithdrawalMark {
  /** Absent for a withdrawal of the whole record. */
  purpose?: string;
  at: string;
  /** Where it was made from; `newer_record` when a newer record of the person superseded this one. */
  channel?: string;
  /**
   * Counts on its own record only, like a `newer_record` one: a hosted consent's revocation (by the
   * person on their records page, or by the organisation with the session token) takes back that
   * session's consent, which is all its receipt and events say; a record of the same flow decided
   * after the session keeps what it grants.
   */
  ownRecordOnly?: true;
}

/** The channel of a withdrawal a newer record made by superseding the record it sits on. */
export const SUPERSEDED_BY_NEWER_RECORD = 'newer_record';

export interface RecordHistoryEntry {
  record_id: string;
  /**
   * The flow the record answered: a withdrawal on another record counts against this one only when
   * both are of the same flow (entries without it count as one flow among themselves).
   */
  flow_id?: string;
  recorded_at: string;
  /** When the decision was made (the capture's time, an imported row's original time). */
  captured_at?: string;
  /** When the consent it gives lapses (its capture plus the flow's consent duration), if it does. */
  expires_at?: string;
  purposes: Record<string, RecordedPurpose>;
  withdrawn?: WithdrawalMark[];
  /**
   * Only the withdrawals on this entry itself count against it: a hosted consent (a decision
   * session) is in no record's chain, so it carries no withdrawal the person made on a record of the
   * same flow (that withdrawal took back the record's consent; the session's receipt, its events and
   * the records page still say granted).
   */
  ownWithdrawalsOnly?: true;
}

export interface PurposeConsentStatus {
  status: ConsentStatusValue;
  record_id: string;
  /** The flow of the record deciding it (a purpose key can be in several flows: the newest decision decides). */
  flow_id?: string;
  updated_at: string;
}

const time = (iso: string) => {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new RangeError(`not an ISO 8601 timestamp: ${iso}`);
  return ms;
};

const has = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);

export function consentStatusOf(records: RecordHistoryEntry[], now: number = Date.now()): Record<string, PurposeConsentStatus> {
  // Newest decision first, then the newer recording; of equal times the later input wins.
  const newestFirst = records
    .map((record, index) => {
      const recorded = time(record.recorded_at);
      return { record, index, recorded, at: record.captured_at === undefined ? recorded : time(record.captured_at) };
    })
    .sort((a, b) => b.at - a.at || b.recorded - a.recorded || b.index - a.index);

  const withdrawals = newestFirst.flatMap(({ record }) =>
    (record.withdrawn ?? []).map((mark) => ({
      record_id: record.record_id,
      flow_id: record.flow_id,
      purpose: mark.purpose,
      at: mark.at,
      ms: time(mark.at),
      ownRecordOnly: mark.channel === SUPERSEDED_BY_NEWER_RECORD || mark.ownRecordOnly === true,
    })),
  );

  const result: Record<string, PurposeConsentStatus> = {};
  const decided = new Set<string>();
  for (const { record, at } of newestFirst) {
    for (const [key, purpose] of Object.entries(record.purposes)) {
      if (decided.has(key)) continue;
      decided.add(key);
      let entry: PurposeConsentStatus = { status: purpose.status, record_id: record.record_id, updated_at: record.recorded_at };
      if (purpose.status === 'granted') {
        const applying = withdrawals
          .filter(
            (w) =>
              (w.purpose === undefined || w.purpose === key) &&
              (w.record_id === record.record_id || (!w.ownRecordOnly && !record.ownWithdrawalsOnly && w.flow_id === record.flow_id && w.ms >= at)),
          )
          .filter((w) => w.record_id === record.record_id || holds(records, w.record_id, key))
          .sort((a, b) => a.ms - b.ms);
        const lapsed = record.expires_at !== undefined && time(record.expires_at) <= now ? record.expires_at : undefined;
        if (applying.length > 0 && (lapsed === undefined || applying[0].ms <= time(lapsed))) entry = { status: 'withdrawn', record_id: record.record_id, updated_at: applying[0].at };
        else if (lapsed !== undefined) entry = { status: 'expired', record_id: record.record_id, updated_at: lapsed };
      }
      result[key] = record.flow_id === undefined ? entry : { status: entry.status, record_id: entry.record_id, flow_id: record.flow_id, updated_at: entry.updated_at };
    }
  }
  return result;
}

/** When a record's consent lapses: its capture plus the flow version's consent duration; undefined without one. */
export function consentLapsesAt(capturedAt: Date | string, consentDuration: unknown): string | undefined {
  const duration = parseIsoDuration(consentDuration);
  if (!duration) return undefined;
  try {
    return addIsoDuration(new Date(capturedAt), duration).toISOString();
  } catch {
    return undefined;
  }
}

/** Whether the record with this id granted the purpose: a whole withdrawal of it took back what it granted, not what it declined. */
function holds(records: RecordHistoryEntry[], recordId: string, key: string): boolean {
  return records.some((record) => record.record_id === recordId && has(record.purposes, key) && record.purposes[key].status === 'granted');
}
