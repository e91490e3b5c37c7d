import { FlowTerms, hostedRevocationByPurpose } from '@dcr/domain';
import { EntityManager } from 'typeorm';
import { NewOutboxEvent, recordEvent } from '../outbox/outbox';
import { DecisionSession } from './decision-session.entity';

export type Actor = { type: 'application' | 'participant' | 'host' | 'system'; id?: string };

/** The audit-only event of a session's state change, with its actor (not sent to webhooks). */
export function transitionEvent(session: DecisionSession, from: string | null, to: string, actor: Actor, at: Date): NewOutboxEvent {
  return {
    type: 'decision.state_changed',
    applicationId: session.applicationId,
    internal: true,
    occurredAt: at,
    data: { session_id: session.id, kind: session.kind, from, to, actor, flow_id: session.flowId, flow_version: session.flowVersion },
  };
}

/** Every state change of a session, with its actor, in the caller's transaction. */
export function recordTransition(
  manager: EntityManager,
  session: DecisionSession,
  from: string | null,
  to: string,
  actor: Actor,
  at: Date,
): Promise<unknown> {
  return recordEvent(manager, transitionEvent(session, from, to, actor, at));
}

/**
 * What every outcome event of a session names: the session (its public id, `dcs_…`, which the
 * create answer names too), its record and the flow version it answered. Never the session token:
 * it is the participant's credential (a fulfilled consent can be revoked with it), and events stay
 * in the audit trail and in the webhook delivery log, which others read.
 */
export function sessionRecordOf(session: DecisionSession): Record<string, unknown> {
  return { session_id: session.id, record_id: session.recordId, flow_id: session.flowId, flow_version: session.flowVersion };
}

/**
 * The consent purposes of a hosted session's flow version that its person decided on (in the order
 * of the terms): the decisions a withdrawal can take back. Notice-only purposes take no decision and
 * a legitimate interest is objected to, not withdrawn.
 */
export function decidedConsents(terms: FlowTerms, decided: Record<string, boolean>): FlowTerms['purposes'] {
  return terms.purposes.filter((purpose) => purpose.takes_decision && purpose.basis !== 'legitimate_interest' && purpose.key in decided);
}

/** The consent purposes the person withdrew from a hosted consent one at a time (its `withdrawals`). */
function withdrawnOneByOne(session: Pick<DecisionSession, 'withdrawals'>): Set<string> {
  return new Set((session.withdrawals ?? []).map((mark) => mark.purpose));
}

/**
 * What a hosted consent's revocation withdraws, as its `consent.revoked` says it: each consent
 * purpose's outcome (`withdrawn` for what was given, `declined` for what never was), the purposes
 * withdrawn now (what the person withdrew one at a time before is not withdrawn again), and
 * `scope: 'purpose'` while a noticed legitimate-interest purpose of it stands, or after a purpose
 * was withdrawn on its own (the revocation takes back only what is still given, so it is a
 * withdrawal by purpose, as a record's is).
 */
export function sessionRevocation(
  terms: FlowTerms,
  session: Pick<DecisionSession, 'purposeDecisions' | 'purposeOutcomes' | 'withdrawals'>,
): { purposes: Record<string, string>; withdrawn: string[]; scope?: 'purpose' } {
  const decided = session.purposeDecisions ?? {};
  const consents = decidedConsents(terms, decided);
  const before = withdrawnOneByOne(session);
  const withdrawn = consents.filter((purpose) => decided[purpose.key] && !before.has(purpose.key)).map((purpose) => purpose.key);
  const byPurpose = hostedRevocationByPurpose({ terms, purpose_outcomes: session.purposeOutcomes, purpose_decisions: session.purposeDecisions, withdrawals: session.withdrawals });
  return {
    purposes: Object.fromEntries(consents.map((purpose) => [purpose.key, decided[purpose.key] ? 'withdrawn' : 'declined'])),
    withdrawn,
    ...(byPurpose ? { scope: 'purpose' as const } : {}),
  };
}

/**
 * What withdrawing some of a hosted consent's purposes while others stay given says
 * (`consent.purpose_revoked`): each consent purpose's outcome after it (`withdrawn` for what was
 * given and is withdrawn now or was before, `granted` for what stays, `declined` for what never
 * was), and the purposes withdrawn now.
 */
export function sessionPurposeWithdrawal(
  terms: FlowTerms,
  session: Pick<DecisionSession, 'purposeDecisions' | 'withdrawals'>,
  withdrawn: string[],
): { purposes: Record<string, string>; withdrawn: string[] } {
  const decided = session.purposeDecisions ?? {};
  const gone = new Set([...withdrawnOneByOne(session), ...withdrawn]);
  const outcome = (key: string) => (!decided[key] ? 'declined' : gone.has(key) ? 'withdrawn' : 'granted');
  return { purposes: Object.fromEntries(decidedConsents(terms, decided).map((purpose) => [purpose.key, outcome(purpose.key)])), withdrawn };
}

/**
 * A hosted consent revoked (its session now `revoked`): `consent.revoked` with the session's record,
 * in the caller's transaction. `extra`: what the revoking path knows besides (the records page says
 * which purposes were given, its channel and the person as actor; a revocation with the session
 * token says nothing more).
 */
export function recordSessionRevoked(
  manager: EntityManager,
  session: DecisionSession,
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<unknown> {
  return recordSessionWithdrawal(manager, 'consent.revoked', session, at, extra);
}

/**
 * Some purposes of a hosted consent withdrawn while others stay given (the person, on their records
 * page): `consent.purpose_revoked` with the session's record, in the caller's transaction; `extra`
 * as for recordSessionRevoked (sessionPurposeWithdrawal, the channel, the time, the person).
 */
export function recordSessionPurposeRevoked(manager: EntityManager, session: DecisionSession, at: Date, extra: Record<string, unknown>): Promise<unknown> {
  return recordSessionWithdrawal(manager, 'consent.purpose_revoked', session, at, extra);
}

function recordSessionWithdrawal(
  manager: EntityManager,
  type: 'consent.revoked' | 'consent.purpose_revoked',
  session: DecisionSession,
  at: Date,
  extra: Record<string, unknown>,
): Promise<unknown> {
  return recordEvent(manager, {
    type,
    applicationId: session.applicationId,
    occurredAt: at,
    // null when the session named no person, as its outcome event and the exchange's claims say it.
    data: { ...sessionRecordOf(session), subject: session.subjectId ? { id: session.subjectId } : null, ...extra },
  });
}
