import type { RecordedPurpose } from './attestation';
import { SUPERSEDED_BY_NEWER_RECORD, WithdrawalMark } from './status';
import { SupersessionEvent, supersessionOf, withdrawsAllInForce } from './supersession';

/*
 * A person's records of one flow form a chain in the order the decisions were made (`captured_at`,
 * then the order of arrival). A record is written as if it had arrived in that order, also when it
 * arrives after a record captured later (an import of history, a form builder's late delivery):
 *
 * Decisions made where the specification leaves room:
 * - Its place in the chain is after every record captured at or before it (equal times: the order of
 *   arrival, so after the ones already there): the last of those is its predecessor, the first record
 *   captured after it (if any) its successor, and then it is late.
 * - It supersedes its predecessor (supersessionOf on the predecessor's purposes in force), late or
 *   not, and its successor supersedes it at once (supersessionOf on the record's purposes in force
 *   against the successor's purposes as it decided them: what a newer record withdrew from the
 *   successor since is no decision the successor made when it followed this one).
 * - It carries the withdrawals the person made on its predecessor at or after its own decision
 *   (carriedWithdrawals): made in that order, the person would have withdrawn from this record, the
 *   newest one they had when they withdrew. Only the person's own withdrawals carry over (any channel
 *   but `newer_record`: a newer record's withdrawal is that record's decision, compared anew here).
 *   They are kept on the record as marks of their own, one per purpose (a whole withdrawal: each
 *   purpose the predecessor held, as consentStatusOf counts a whole withdrawal on another record), at
 *   the withdrawal's time and with its channel, also for purposes this record does not grant: the
 *   person's withdrawals on the records before the predecessor reach it through the predecessor (a
 *   record declining the purpose in between does not stop them), so a record carries every withdrawal
 *   the person made on an earlier record of the flow after its own decision, which is what
 *   consentStatusOf counts against it. Only the purposes it grants are withdrawn by them (events and
 *   receipt), each by its earliest withdrawal, purpose by purpose (a carried withdrawal is never one
 *   of the whole record); one withdrawal of the person (its marks share its time and channel) is one
 *   event however many purposes it took back.
 */

/**
 * A granted purpose a withdrawal took back reads `declined`, marked `withdrawn`; one whose consent
 * term ran out, `declined` marked `lapsed` (outcomesAfterWithdrawal reads them `withdrawn` and `expired`).
 */
export type PurposeAfterWithdrawals = RecordedPurpose & { withdrawn?: true; lapsed?: true };

/**
 * A record's purposes as a newer record of the same person and flow meets them: a granted purpose
 * withdrawn since (a mark of the whole record, or of that purpose, whatever its channel) counts as no
 * longer granted, so the newer record does not withdraw it a second time. The record stays frozen;
 * this is only what supersession compares.
 */
export function purposesInForce(purposes: Record<string, RecordedPurpose>, marks: readonly WithdrawalMark[] = []): Record<string, PurposeAfterWithdrawals> {
  if (marks.length === 0) return purposes;
  return Object.fromEntries(
    Object.entries(purposes).map(([key, purpose]): [string, PurposeAfterWithdrawals] =>
      purpose.status === 'granted' && marks.some((mark) => mark.purpose === undefined || mark.purpose === key)
        ? [key, { ...purpose, status: 'declined', withdrawn: true }]
        : [key, purpose],
    ),
  );
}

/**
 * A record's purposes in force as a decision made at `decidedAt` (ms) meets them: once its consent
 * term has run out (`lapsesAt`, ms), a purpose it still granted is expired, no longer granted, so a
 * newer decision has nothing of it to withdraw (the person's own withdrawal refuses it too). What
 * the term does not end (a noticed legitimate interest, a declined purpose) stays as it is.
 */
export function purposesAt(purposes: Record<string, PurposeAfterWithdrawals>, lapsesAt: number | undefined, decidedAt: number): Record<string, PurposeAfterWithdrawals> {
  if (lapsesAt === undefined || decidedAt < lapsesAt) return purposes;
  return Object.fromEntries(
    Object.entries(purposes).map(([key, purpose]): [string, PurposeAfterWithdrawals] => (purpose.status === 'granted' ? [key, { ...purpose, status: 'declined', lapsed: true }] : [key, purpose])),
  );
}

/** Where a record captured at `capturedAt` (ms) falls in a chain in made order: its index, predecessor and successor. */
export function placeInChain<T extends { capturedAt: number }>(chain: readonly T[], capturedAt: number): { index: number; predecessor: T | null; successor: T | null } {
  let index = chain.length;
  while (index > 0 && chain[index - 1].capturedAt > capturedAt) index--;
  return { index, predecessor: index > 0 ? chain[index - 1] : null, successor: index < chain.length ? chain[index] : null };
}

/** A withdrawal the person made on a record's predecessor that takes back purposes the record grants (carriedWithdrawals). */
export interface CarriedWithdrawal {
  /** When the person made it (the mark's own time). */
  at: string;
  channel?: string;
  /** The granted purposes of the record it withdraws, in the record's order. */
  purposes: string[];
  /** What stays granted on the record after it (and the carried withdrawals before it). */
  stillGranted: string[];
}

/**
 * The person's withdrawals on `predecessor` made at or after `capturedAt` (ms, the record's decision)
 * that the record of `purposes` carries: the marks to keep on it (`marks`, oldest first) and, oldest
 * first, the withdrawals among them that take back a purpose it grants (`withdrawals`, a purpose once:
 * by its earliest withdrawal). See the module notes.
 */
export function carriedWithdrawals(
  predecessor: { purposes: Record<string, RecordedPurpose>; withdrawals?: readonly WithdrawalMark[] },
  purposes: Record<string, RecordedPurpose>,
  capturedAt: number,
): { marks: WithdrawalMark[]; withdrawals: CarriedWithdrawal[] } {
  const own = (predecessor.withdrawals ?? [])
    .map((mark, order) => ({ mark, order, ms: Date.parse(mark.at) }))
    .filter(({ mark, ms }) => mark.channel !== SUPERSEDED_BY_NEWER_RECORD && ms >= capturedAt)
    .sort((a, b) => a.ms - b.ms || a.order - b.order);
  const granted = Object.entries(purposes).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => key);
  const taken = new Set<string>();
  const marks: WithdrawalMark[] = [];
  const withdrawals: CarriedWithdrawal[] = [];
  // One withdrawal of the person is one group: a withdrawal of several purposes is kept as one mark
  // per purpose (while a noticed legitimate interest stands, or carried before), all with its time
  // and channel, and is carried as the one withdrawal it was (one event), not one per purpose.
  for (let first = 0; first < own.length; ) {
    const { mark } = own[first];
    let end = first + 1;
    while (end < own.length && own[end].mark.at === mark.at && own[end].mark.channel === mark.channel) end++;
    const channel = mark.channel !== undefined ? { channel: mark.channel } : {};
    const scope = new Set<string>();
    for (const { mark: each } of own.slice(first, end)) {
      // A whole withdrawal took back what the record granted (its answer's `withdrawn`), not what it declined.
      const purposes = each.purpose === undefined ? Object.entries(predecessor.purposes).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => key) : [each.purpose];
      marks.push(...purposes.map((purpose) => ({ purpose, at: each.at, ...channel })));
      purposes.forEach((purpose) => scope.add(purpose));
    }
    first = end;
    const now = granted.filter((key) => !taken.has(key) && scope.has(key));
    if (now.length === 0) continue;
    now.forEach((key) => taken.add(key));
    withdrawals.push({ at: mark.at, ...channel, purposes: now, stillGranted: granted.filter((key) => !taken.has(key)) });
  }
  return { marks, withdrawals };
}

/** A record of a person's chain of one flow as a write meets it. */
export interface ChainLink {
  recordId: string;
  /** Its purposes as decided (frozen). */
  purposes: Record<string, RecordedPurpose>;
  /** Its withdrawal marks; recordInChain appends the ones it adds. */
  withdrawals: WithdrawalMark[];
  /** When its decision was made (ms). */
  capturedAt: number;
  /** When its consent term runs out (ms: its decision plus its flow version's consent_duration); none without a term. */
  lapsesAt?: number;
}

/** A withdrawal recordInChain makes: on which record, what, and the marks it appends there. */
export interface ChainWithdrawal {
  recordId: string;
  /** The record's purposes in force before it (outcomesAfterWithdrawal reads them). */
  before: Record<string, PurposeAfterWithdrawals>;
  withdrawn: string[];
  /** Legitimate-interest purposes the record let stand that the newer record objects to. */
  objected: string[];
  event: SupersessionEvent;
  /** A withdrawal of the whole record (else purpose by purpose; `consent.revoked` then says `scope: "purpose"`). */
  whole: boolean;
  /**
   * When it was made: a newer record's, that record's decision (its `captured_at`, the time the
   * in-force check reads: a late record of history decided before the older consent's term ended
   * withdraws, and objects, before it ended, not at the write after it); a carried withdrawal's,
   * its own time. The marks keep the write's time.
   */
  at: string;
  /** `newer_record`, or a carried withdrawal's own channel. */
  channel?: string;
  /** The newer record that superseded it (`newer_record`). */
  supersededBy?: string;
  /** The record the person made a carried withdrawal on. */
  carriedFrom?: string;
}

/**
 * Puts `link` (a new record, without marks) into `chain` (a person's records of one flow in made
 * order, as far as the write needs them) as the module notes say, at `recordedAt` (the write's time,
 * the newer-record marks' time): inserts it, appends the marks to the records withdrawn from, and
 * answers its place and the withdrawals in the order they were made (by the record from its
 * predecessor, those it carries, by its successor from it).
 */
export function recordInChain<T extends ChainLink>(
  chain: T[],
  link: T,
  recordedAt: string,
): { predecessor: T | null; successor: T | null; withdrawals: ChainWithdrawal[] } {
  const { index, predecessor, successor } = placeInChain(chain, link.capturedAt);
  const withdrawals: ChainWithdrawal[] = [];
  const supersede = (older: ChainLink, newer: ChainLink) => {
    // In force when the newer decision was made: withdrawn since, or expired by then, it is not withdrawn again.
    const before = purposesAt(purposesInForce(older.purposes, older.withdrawals), older.lapsesAt, newer.capturedAt);
    const change = supersessionOf(before, newer.purposes);
    if (!change.event) return;
    // Whole only when nothing the older record's receipt lists stays in force (a noticed legitimate
    // interest stands, or is objected to now, which is no withdrawal): else one mark per purpose.
    const whole = change.event === 'consent.revoked' && change.withdrawn.length > 0 && withdrawsAllInForce(before, change.withdrawn);
    const marks = whole ? [{ at: recordedAt, channel: SUPERSEDED_BY_NEWER_RECORD }] : change.withdrawn.map((purpose) => ({ purpose, at: recordedAt, channel: SUPERSEDED_BY_NEWER_RECORD }));
    older.withdrawals.push(...marks);
    withdrawals.push({
      recordId: older.recordId,
      before,
      withdrawn: change.withdrawn,
      objected: change.objected,
      event: change.event,
      whole,
      at: new Date(newer.capturedAt).toISOString(),
      channel: SUPERSEDED_BY_NEWER_RECORD,
      supersededBy: newer.recordId,
    });
  };
  if (predecessor) {
    supersede(predecessor, link);
    const carried = carriedWithdrawals(predecessor, link.purposes, link.capturedAt);
    const taken: WithdrawalMark[] = [];
    for (const withdrawal of carried.withdrawals) {
      withdrawals.push({
        recordId: link.recordId,
        before: purposesInForce(link.purposes, taken),
        withdrawn: withdrawal.purposes,
        objected: [],
        event: withdrawal.stillGranted.length > 0 ? 'consent.purpose_revoked' : 'consent.revoked',
        whole: false,
        at: withdrawal.at,
        ...(withdrawal.channel !== undefined ? { channel: withdrawal.channel } : {}),
        carriedFrom: predecessor.recordId,
      });
      taken.push(...withdrawal.purposes.map((purpose) => ({ purpose, at: withdrawal.at })));
    }
    link.withdrawals.push(...carried.marks);
  }
  if (successor) supersede(link, successor);
  chain.splice(index, 0, link);
  return { predecessor, successor, withdrawals };
}
