import { DomainError } from '../errors';
import { decodeCursor, encodeCursor } from '../paging/paging';

/**
 * Where the person came to their records page from, as its link says (`via`): the receipt's
 * `withdrawal_method` (`receipt`) or the receipt mail (`email`). Without it they came on their own
 * (the inbox, a bookmark, a receipt frozen before the links were told apart).
 */
export type RecordsPageVia = 'receipt' | 'email';

/** The channels a withdrawal by the person can state (the receipt's `event_channel`, the webhooks' `channel`). */
export const PERSON_WITHDRAWAL_CHANNELS = ['own_records', 'email_link', 'receipt_link'] as const;
export type PersonWithdrawalChannel = (typeof PERSON_WITHDRAWAL_CHANNELS)[number];

const CHANNEL_OF_VIA: Record<RecordsPageVia, PersonWithdrawalChannel> = { receipt: 'receipt_link', email: 'email_link' };

/**
 * The person's records page for one organisation: the credential-free withdrawal entry of every
 * consent receipt (`withdrawal_method`, with `via=receipt`) and the link of the receipt mail (with
 * `via=email`). The person signs in there with a mailed one-time code and sees that organisation's
 * records in this country (the page without `application_id` shows every organisation's). `via`
 * is no credential and the same for every receipt of the organisation: it only lets a withdrawal
 * made from the page say which link brought the person there.
 */
export function recordsPageUrl(base: string, applicationId: string, via?: RecordsPageVia): string {
  return `${base.replace(/\/+$/, '')}/inbox/records?application_id=${encodeURIComponent(applicationId)}${via ? `&via=${via}` : ''}`;
}

/** `value` when it is a `via` the records page knows, else undefined (an unknown one is ignored, not trusted). */
export function recordsPageVia(value: unknown): RecordsPageVia | undefined {
  return value === 'receipt' || value === 'email' ? value : undefined;
}

/** The channel a withdrawal made on the records page states: the link that brought the person there, else their own records. */
export function withdrawalChannelOf(via: RecordsPageVia | undefined): PersonWithdrawalChannel {
  return via ? CHANNEL_OF_VIA[via] : 'own_records';
}

/**
 * On a replaced record (a newer record of the flow supersedes it), the purposes it still grants that
 * no newer record of the flow holds (a newer flow version dropped them): consent_status is decided by
 * this record for them, so the person withdraws them here. Every other purpose is the newer record's
 * to speak for. `statuses`: the record's purposes as they stand; `newerPurposes`: every purpose the
 * newer records hold, in any status.
 */
export function stillInForceOnReplaced(statuses: Record<string, { status: string }>, newerPurposes: readonly string[]): string[] {
  const newer = new Set(newerPurposes);
  return Object.entries(statuses)
    .filter(([key, purpose]) => purpose.status === 'granted' && !newer.has(key))
    .map(([key]) => key);
}

/** What the records page orders a listed record by: when it was given, when it was recorded, its id. */
export interface RecordsPageEntry {
  record_id: string;
  /** When the person gave the decision (a record's `captured_at`, a hosted consent's completion). */
  captured_at: string;
  /** When the service recorded it (for imported history, the import). */
  recorded_at: string;
}

/**
 * A listed record's place on the person's records page (newest first, compared part by part, as
 * cursors keep it): the order the person gave their consents in, their `captured_at`, not the order
 * the service recorded them (imported history is recorded years after it was given, and would
 * otherwise be listed above the consent the person gave last). Equal times: the later recording,
 * then the record id. Both times are ISO 8601 UTC strings, which compare as the times do.
 */
export function recordsPagePosition(entry: RecordsPageEntry): [string, string, string] {
  return [entry.captured_at, entry.recorded_at, entry.record_id];
}

/** Which list of the person's records a cursor pages: every organisation's, or one's. */
export function recordsPageList(applicationId?: string): string {
  return `inbox_records:${applicationId ?? '*'}`;
}

/** A time of a records page position: ISO 8601 UTC, to the microsecond that the database keeps. */
const POSITION_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const POSITION_RECORD = /^rec_[a-z]{2}[0-9a-z]{20}$/;

/**
 * The cursor of the records page after `position` (the last one listed) in `list`
 * (recordsPageList): opaque, naming the list and the position (two times and a record id), nothing
 * of the person.
 */
export function recordsPageCursor(list: string, position: readonly [string, string, string]): string {
  return encodeCursor({ list, after: position });
}

/**
 * The position a records page cursor names (undefined without one). A cursor that is no cursor
 * (malformed), or one of another list (another organisation's, or every organisation's), or one
 * whose position is not two times and a record id (changed by hand), is `invalid_request` naming
 * `cursor`: never read as the first page, never passed on to a query.
 */
export function recordsPageAfter(cursor: unknown, list: string): [string, string, string] | undefined {
  const decoded = decodeCursor<{ list?: unknown; after?: unknown }>(cursor);
  if (decoded === undefined) return undefined;
  const after = decoded.after;
  const valid =
    decoded.list === list &&
    Array.isArray(after) &&
    after.length === 3 &&
    after.every((part) => typeof part === 'string') &&
    POSITION_TIME.test(after[0]) &&
    POSITION_TIME.test(after[1]) &&
    !Number.isNaN(Date.parse(after[0])) &&
    !Number.isNaN(Date.parse(after[1])) &&
    POSITION_RECORD.test(after[2]);
  if (!valid) throw new DomainError('invalid_request', 'The cursor does not belong to this list', [{ field: 'cursor', reason: 'not a cursor of this list' }]);
  return after as [string, string, string];
}
