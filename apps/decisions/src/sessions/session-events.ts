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

/**
 * What a hosted consent's revocation withdraws, as its `consent.revoked` says it: each consent
 * purpose's outcome (`withdrawn` for what was given, `declined` for what never was), the purposes
 * withdrawn, and `scope: 'purpose'` while a noticed legitimate-interest purpose of it stands (the
 * revocation takes back only what was given, so it is a withdrawal by purpose, as a record's is).
 */
export function sessionRevocation(
  terms: FlowTerms,
  session: Pick<DecisionSession, 'purposeDecisions' | 'purposeOutcomes'>,
): { purposes: Record<string, string>; withdrawn: string[]; scope?: 'purpose' } {
  const decided = session.purposeDecisions ?? {};
  const consents = decidedConsents(terms, decided);
  const withdrawn = consents.filter((purpose) => decided[purpose.key]).map((purpose) => purpose.key);
  const byPurpose = hostedRevocationByPurpose({ terms, purpose_outcomes: session.purposeOutcomes, purpose_decisions: session.purposeDecisions });
  return {
    purposes: Object.fromEntries(consents.map((purpose) => [purpose.key, decided[purpose.key] ? 'withdrawn' : 'declined'])),
    withdrawn,
    ...(byPurpose ? { scope: 'purpose' as const } : {}),
  };
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
  return recordEvent(manager, {
    type: 'consent.revoked',
    applicationId: session.applicationId,
    occurredAt: at,
    // null when the session named no person, as its outcome event and the exchange's claims say it.
    data: { ...sessionRecordOf(session), subject: session.subjectId ? { id: session.subjectId } : null, ...extra },
  });
}
