import { ParticipantViewMessage } from '@dcr/contracts';
import { DecisionStatus, FlowTerms, isInFlight, nextStatuses, participantFlow } from '@dcr/domain';
import { FlowVersion } from '../flows/flow-version.entity';
import { DecisionSession } from './decision-session.entity';

/** `alice@example.com` → `a…e@example.com`: enough for the person to recognise, not to read off. */
export function emailHint(email: string): string {
  const [local, domain] = email.split('@');
  if (!domain) return '…';
  const shown = local.length <= 2 ? `${local[0] ?? ''}…` : `${local[0]}…${local[local.length - 1]}`;
  return `${shown}@${domain}`;
}

/** The transitions the participant API accepts from here: in-flight targets, plus a withdrawal. */
export function participantTransitions(session: DecisionSession): string[] {
  const next = nextStatuses(session.status as DecisionStatus, session.path);
  return next.filter((status) => isInFlight(status) || (status === 'revoked' && session.kind === 'consent'));
}

/** The session as the participant sees it; `token` is the one they presented (the row keeps only its hash). */
export function toParticipantView(session: DecisionSession, token: string, flow: FlowVersion | null, now = new Date()): ParticipantViewMessage {
  const terms = flow?.terms as unknown as FlowTerms | undefined;
  return {
    session_token: token,
    kind: session.kind,
    status: session.status,
    path: session.path,
    delivery_mode: session.deliveryMode,
    embed_origin: session.embedOrigin,
    redirect_uri: session.redirectUri,
    deadline_at: session.deadlineAt?.toISOString() ?? null,
    expires_at: session.expiresAt.toISOString(),
    locale: session.locale,
    now: now.toISOString(),
    // The gateway fills in the name from the replicated application configuration.
    application: { id: session.applicationId, name: '' },
    allowed_transitions: participantTransitions(session),
    signed_in: session.signedInAt && session.subjectEmail ? { email_hint: emailHint(session.subjectEmail) } : null,
    outcome: session.outcome,
    flow: flow && terms ? participantFlow(flow, terms) : null,
    approval: session.approval,
  };
}
