import type { PurposeStatus } from '../decisions/purpose-decisions';
import type { PurposeTerms } from '../flows/flow-terms';
import type { RecordedPurpose } from './attestation';
import { ChainLink, ChainWithdrawal, recordInChain } from './chain';
import { consentLapsesAt, RecordHistoryEntry, WithdrawalMark } from './status';
import { withdrawsAllInForce } from './supersession';

/*
 * A consent decided on the hosted pages (a decision session completed by the person) as one entry of
 * the person's record history, so that `consent_status` weighs it with the Record API's records by
 * the same rule (consentStatusOf: the newest decision holding a purpose decides it).
 *
 * Decisions made where the specification leaves room:
 * - The decision's time is the session's completion, both as decided and as recorded (the service
 *   completes it as the person decides); its record is the one the receipt and the webhooks name.
 * - Each purpose is as the person decided it, as `consent.granted`/`consent.denied` carry them:
 *   `granted`/`declined` for consent, `noticed`/`objected` for a legitimate interest, `noticed` for a
 *   notice-only purpose, with the basis of the flow version the session answered.
 * - A session completed before its outcomes were kept per purpose kept only whether each was granted:
 *   a consent purpose is then granted or declined, a notice-only one noticed, and a legitimate
 *   interest (noticed or objected, which a boolean cannot tell apart) is left out rather than guessed,
 *   leaving any other record of the person in charge of it.
 * - It is in no record's chain, so it carries no withdrawal the person made on a record of the same
 *   flow, even one made after it (ownWithdrawalsOnly): that took back the record's consent only.
 *   A record of the same flow decided after it withdraws from it what it no longer grants
 *   (hostedWithdrawalsByNewerRecords): marks on the session, as on a record it supersedes. It takes
 *   back from the person's newest record of the flow decided before it what a newer record would
 *   (recordWithdrawalsByHostedDecision), and from their earlier hosted consents of the flow the same
 *   way a record does.
 * - The person may withdraw its purposes one at a time on their records page (`withdrawals`: a mark
 *   each, at its time); the rest stands. A revoked session withdraws, at its revocation, each purpose
 *   it granted that no such mark took back before, and only those (marks by purpose, not the whole
 *   record: what it declined or noticed stays, and the revocation takes back no other record's grant
 *   of a purpose this session declined).
 * - Its consent lapses like a record's: completion plus the flow version's `consent_duration`.
 */

export interface HostedConsentDecision {
  record_id: string;
  /** The flow the session answered (a withdrawal counts against records of the same flow: consentStatusOf). */
  flow_id?: string;
  completed_at: Date | string;
  /** The session's status: `revoked` once the consent was withdrawn. */
  status: string;
  /** When it was revoked; read only for a revoked session. */
  revoked_at?: Date | string | null;
  /** The purposes the person withdrew one at a time before (or without) a revocation; none when absent. */
  withdrawals?: ReadonlyArray<{ purpose?: string; at: Date | string; channel?: string }> | null;
  /** What the person decided per purpose, as the outcome events carry it; null for sessions completed before it was kept. */
  purpose_outcomes: Record<string, PurposeStatus> | null;
  /** Per purpose, whether it was granted (every completed consent session keeps this). */
  purpose_decisions: Record<string, boolean> | null;
  /** The terms of the flow version the session answered. */
  terms: { purposes: Pick<PurposeTerms, 'key' | 'basis' | 'takes_decision'>[]; consent_duration?: string | null };
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** A hosted consent decision as a record of the person's history (see the module notes). */
export function hostedDecisionHistory(decision: HostedConsentDecision): RecordHistoryEntry {
  const decidedAt = iso(decision.completed_at);
  const purposes = hostedPurposes(decision);
  const withdrawn = purposeWithdrawals(decision, purposes);
  if (decision.status === 'revoked' && decision.revoked_at) {
    const before = new Set(withdrawn.map((mark) => mark.purpose));
    for (const [key, purpose] of Object.entries(purposes)) {
      if (purpose.status === 'granted' && !before.has(key)) withdrawn.push({ purpose: key, at: iso(decision.revoked_at), ownRecordOnly: true });
    }
  }
  const expiresAt = consentLapsesAt(decidedAt, decision.terms.consent_duration);
  return {
    record_id: decision.record_id,
    ...(decision.flow_id !== undefined ? { flow_id: decision.flow_id } : {}),
    recorded_at: decidedAt,
    captured_at: decidedAt,
    ...(expiresAt ? { expires_at: expiresAt } : {}),
    purposes,
    ...(withdrawn.length > 0 ? { withdrawn } : {}),
    ownWithdrawalsOnly: true,
  };
}

/** The purposes of a hosted consent the person withdrew one at a time, each once (its first mark), as marks on it alone. */
function purposeWithdrawals(decision: Pick<HostedConsentDecision, 'withdrawals'>, purposes: Record<string, RecordedPurpose>): WithdrawalMark[] {
  const marks: WithdrawalMark[] = [];
  for (const mark of decision.withdrawals ?? []) {
    if (mark.purpose === undefined || purposes[mark.purpose]?.status !== 'granted' || marks.some((earlier) => earlier.purpose === mark.purpose)) continue;
    marks.push({ purpose: mark.purpose, at: iso(mark.at), ...(mark.channel ? { channel: mark.channel } : {}), ownRecordOnly: true });
  }
  return marks;
}

/**
 * The consent purposes a hosted consent still grants: those the person granted that no withdrawal
 * of theirs took back (one at a time, or the session's revocation). Its term is not weighed here.
 */
export function hostedPurposesGranted(decision: Pick<HostedConsentDecision, 'status' | 'purpose_outcomes' | 'purpose_decisions' | 'terms' | 'withdrawals'>): string[] {
  if (decision.status === 'revoked') return [];
  const purposes = hostedPurposes(decision);
  const withdrawn = new Set(purposeWithdrawals(decision, purposes).map((mark) => mark.purpose));
  return Object.entries(purposes)
    .filter(([key, purpose]) => purpose.status === 'granted' && !withdrawn.has(key))
    .map(([key]) => key);
}

/** A record of the person and flow of a hosted consent, written after it was decided (hostedWithdrawalsByNewerRecords). */
export interface NewerRecordDecision {
  record_id: string;
  /** When its decision was made. */
  captured_at: Date | string;
  /** Its purposes as decided (only a purpose it holds can be taken back by it). */
  purposes: Record<string, { status: string }>;
}

/** What one newer record withdraws from a hosted consent: the purposes, when, and what the consent still grants after it. */
export interface HostedWithdrawalByRecord {
  /** The newer record. */
  record_id: string;
  /** The newer record's decision time (ISO 8601): the withdrawal's time. */
  at: string;
  withdrawn: string[];
  /** Legitimate-interest purposes the hosted consent let stand (`noticed`) that the newer record objects to. */
  objected: string[];
  /** The consent purposes the hosted consent still grants after it. */
  remaining: string[];
}

/**
 * What records of the same person and flow decided after a hosted consent withdraw from it: a
 * record decided at or after the session's completion (equal times: the record arrived later)
 * takes back each purpose the consent still grants that the record holds and does not grant, at
 * the record's decision time, as a newer record takes them back from the record it supersedes.
 * The records are taken in the order they were decided; a purpose goes once. Nothing is withdrawn
 * from a revoked session, nor by a record decided after the consent's term ran out (an expired
 * consent is no longer granted), nor by one decided before it (history: the hosted consent is the
 * newer decision). A purpose a newer record does not hold (a later flow version dropped it) stays
 * given through the hosted consent, as through a record. A legitimate interest the hosted consent
 * let stand (`noticed`) that a newer record objects to is objected to there, once (the term does
 * not end a legitimate interest); a mark of it (`withdrawals`, which no status reads for a purpose
 * that was not granted) keeps a later record from objecting again. Nothing of a revoked session.
 */
export function hostedWithdrawalsByNewerRecords(decision: HostedConsentDecision, records: readonly NewerRecordDecision[]): HostedWithdrawalByRecord[] {
  if (decision.status === 'revoked') return [];
  const completedAt = new Date(decision.completed_at).getTime();
  const lapsesAt = consentLapsesAt(decision.completed_at, decision.terms.consent_duration);
  const lapse = lapsesAt === undefined ? Infinity : Date.parse(lapsesAt);
  let granted = hostedPurposesGranted(decision);
  const marked = new Set((decision.withdrawals ?? []).map((mark) => mark.purpose));
  let standing = Object.entries(hostedPurposes(decision))
    .filter(([key, purpose]) => purpose.status === 'noticed' && purpose.basis === 'legitimate_interest' && !marked.has(key))
    .map(([key]) => key);
  const holds = (record: NewerRecordDecision, key: string) => Object.prototype.hasOwnProperty.call(record.purposes, key);
  const withdrawals: HostedWithdrawalByRecord[] = [];
  const inOrder = [...records].sort((a, b) => new Date(a.captured_at).getTime() - new Date(b.captured_at).getTime());
  for (const record of inOrder) {
    const at = new Date(record.captured_at).getTime();
    if (at < completedAt) continue;
    const withdrawn = at < lapse ? granted.filter((key) => holds(record, key) && record.purposes[key].status !== 'granted') : [];
    const objected = standing.filter((key) => holds(record, key) && record.purposes[key].status === 'objected');
    if (withdrawn.length === 0 && objected.length === 0) continue;
    granted = granted.filter((key) => !withdrawn.includes(key));
    standing = standing.filter((key) => !objected.includes(key));
    withdrawals.push({ record_id: record.record_id, at: iso(record.captured_at), withdrawn, objected, remaining: granted });
  }
  return withdrawals;
}

/**
 * What a consent decided on the hosted pages at `decidedAt` (ISO 8601) takes back from the person's
 * newest record of the same flow (`newest`, with its marks: they are appended to), as a newer record
 * takes back from the record it supersedes (recordInChain: what it still grants that the hosted
 * decision holds and does not grant is withdrawn, a legitimate interest it let stand that the
 * person objects to now is objected to, nothing that was withdrawn or had expired by then). A record
 * decided after the hosted decision (a later `captured_at`) is the newer one: nothing is taken from it.
 */
export function recordWithdrawalsByHostedDecision(newest: ChainLink, hosted: { record_id: string; purposes: Record<string, RecordedPurpose> }, decidedAt: string): ChainWithdrawal[] {
  const link: ChainLink = { recordId: hosted.record_id, purposes: hosted.purposes, withdrawals: [], capturedAt: Date.parse(decidedAt) };
  return recordInChain<ChainLink>([newest], link, decidedAt).withdrawals.filter((withdrawal) => withdrawal.recordId === newest.recordId);
}

/** Each purpose of a hosted consent as the person decided it, with its basis (see the module notes). */
export function hostedPurposes(decision: Pick<HostedConsentDecision, 'purpose_outcomes' | 'purpose_decisions' | 'terms'>): Record<string, RecordedPurpose> {
  const purposes: Record<string, RecordedPurpose> = {};
  for (const purpose of decision.terms.purposes) {
    const status = decision.purpose_outcomes ? decision.purpose_outcomes[purpose.key] : outcomeFromGrants(purpose, decision.purpose_decisions ?? {});
    if (status !== undefined) purposes[purpose.key] = { status, basis: purpose.basis };
  }
  return purposes;
}

/**
 * Whether revoking a hosted consent (withdrawing every purpose it granted) is a withdrawal by
 * purpose rather than of the whole record: a noticed legitimate-interest purpose of it stands (the
 * revocation does not take it back, and its receipt lists it), as for a record (withdrawsAllInForce).
 * A session that kept no outcome per purpose cannot tell a noticed legitimate interest from an
 * objected one, so it is withdrawn whole, as consent_status leaves that purpose out too. A revocation
 * after the person withdrew a purpose on its own is by purpose as well: it takes back the rest.
 */
export function hostedRevocationByPurpose(decision: Pick<HostedConsentDecision, 'purpose_outcomes' | 'purpose_decisions' | 'terms' | 'withdrawals'>): boolean {
  const purposes = hostedPurposes(decision);
  // A purpose withdrawn on its own before: what the revocation takes back is the rest, by purpose.
  if (purposeWithdrawals(decision, purposes).length > 0) return true;
  const granted = Object.entries(purposes).filter(([, purpose]) => purpose.status === 'granted').map(([key]) => key);
  return !withdrawsAllInForce(purposes, granted);
}

/** A purpose's outcome from a session that kept only whether each purpose was granted. */
function outcomeFromGrants(purpose: Pick<PurposeTerms, 'key' | 'basis' | 'takes_decision'>, granted: Record<string, boolean>): PurposeStatus | undefined {
  if (!purpose.takes_decision) return 'noticed';
  if (purpose.basis === 'legitimate_interest') return undefined;
  if (!Object.prototype.hasOwnProperty.call(granted, purpose.key)) return undefined;
  return granted[purpose.key] === true ? 'granted' : 'declined';
}
