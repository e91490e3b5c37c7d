import { EntityManager } from 'typeorm';
import { recordEvent } from '../outbox/outbox';
import { DecisionSession } from './decision-session.entity';

export type Actor = { type: 'application' | 'participant' | 'host' | 'system'; id?: string };

/** Every state change of a session, with its actor, for the audit trail (not sent to webhooks). */
export function recordTransition(
  manager: EntityManager,
  session: DecisionSession,
  from: string | null,
  to: string,
  actor: Actor,
  at: Date,
): Promise<unknown> {
  return recordEvent(manager, {
    type: 'decision.state_changed',
    applicationId: session.applicationId,
    internal: true,
    occurredAt: at,
    data: { session_id: session.id, kind: session.kind, from, to, actor, flow_id: session.flowId, flow_version: session.flowVersion },
  });
}
