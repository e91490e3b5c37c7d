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
