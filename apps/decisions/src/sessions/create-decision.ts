import { Inject, Injectable } from '@nestjs/common';
import { DecisionsEnvironment } from '@dcr/config';
import { CreateDecisionRequest, DecisionCreated } from '@dcr/contracts';
import { decisionPathFor, DomainError, FlowPattern, newOpaqueId, normaliseEmail } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { FlowsRepository, SessionFlow, StaleFlowVersion } from '../flows/flows.repository';
import { OutboxRelay, outboxRow } from '../outbox/outbox';
import { SubjectsService } from '../subjects/subjects.service';
import { DecisionSession } from './decision-session.entity';
import { transitionEvent } from './session-events';
import { SessionTokens } from './session-tokens';
import { SessionsRepository } from './sessions.repository';

/** A deadline may be at most this far ahead. */
const MAX_DEADLINE_MS = 30 * 24 * 3600 * 1000;
/** Inserts tried before giving up on a flow whose active version keeps changing under a new session. */
const MAX_ATTEMPTS = 3;

/** Opens a session: checks the flow (active, the application's own) and the person's home. */
@Injectable()
export class CreateDecision {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly flows: FlowsRepository,
    private readonly subjects: SubjectsService,
    private readonly relay: OutboxRelay,
    private readonly tokens: SessionTokens,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async execute(request: CreateDecisionRequest): Promise<DecisionCreated> {
    const env = this.context.env as DecisionsEnvironment;
    const now = new Date();
    if (request.kind === 'consent' && !request.flow_id) {
      throw new DomainError('validation_failed', 'A consent decision needs a flow', [{ field: 'flow_id', reason: 'required for kind consent' }]);
    }
    if (request.kind === 'approval' && !request.approval) {
      throw new DomainError('validation_failed', 'An approval needs what is to be approved', [
        { field: 'approval', reason: 'required for kind approval: {title, action, trigger, description?, value?, agent_id?}' },
      ]);
    }
    if (request.kind === 'consent' && request.approval) {
      throw new DomainError('validation_failed', 'Only approvals carry an approval object', [{ field: 'approval', reason: 'not allowed for kind consent' }]);
    }

    let flow = await this.flowFor(request, false);

    let deadline: Date | null = null;
    if (request.deadline_at) {
      deadline = new Date(request.deadline_at);
      if (deadline.getTime() <= now.getTime()) {
        throw new DomainError('validation_failed', 'The deadline has passed', [{ field: 'deadline_at', reason: 'must be in the future' }]);
      }
      if (deadline.getTime() - now.getTime() > MAX_DEADLINE_MS) {
        throw new DomainError('validation_failed', 'The deadline is too far ahead', [{ field: 'deadline_at', reason: 'at most 30 days ahead' }]);
      }
    }
    const expiresAt = deadline ?? new Date(now.getTime() + env.SESSION_TTL_SECONDS * 1000);

    // A named person must be homed here; a person homed elsewhere gets `wrong_country`.
    let subjectId: string | null = null;
    const email = (request.subject?.email && normaliseEmail(request.subject.email)) || null;
    const externalId = request.subject?.external_id?.trim() || null;
    if (email || externalId) {
      const { subject } = await this.subjects.create({
        application_id: request.application_id,
        email: email ?? undefined,
        external_id: externalId ?? undefined,
      }, undefined, 'subject.');
      subjectId = subject.id;
    }

    // The flow's version may have been read from memory: if another was activated since, the insert
    // writes nothing and the session is built again from the version the database names.
    for (let attempt = 1; ; attempt++) {
      // The token is answered here once; the row keeps its hash and the nonce it is derived from.
      const { token, tokenHash, tokenNonce } = this.tokens.issue();
      const session = this.newSession(request, flow, { now, deadline, expiresAt, subjectId, email, externalId, tokenHash, tokenNonce });
      try {
        await this.sessions.insertWithEvent(
          session,
          outboxRow(transitionEvent(session, null, 'pending', { type: 'application', id: request.application_id }, now)),
        );
      } catch (error) {
        if (!(error instanceof StaleFlowVersion)) throw error;
        if (attempt === MAX_ATTEMPTS) throw new DomainError('conflict', 'The flow changed while the decision was being opened: try again');
        flow = await this.flowFor(request, true);
        continue;
      }
      this.relay.kick();
      return {
        session_id: session.id,
        session_token: token,
        kind: session.kind,
        status: session.status,
        delivery_mode: session.deliveryMode,
        flow_id: session.flowId,
        flow_version: session.flowVersion,
        expires_at: expiresAt.toISOString(),
        deadline_at: deadline?.toISOString() ?? null,
        created_at: now.toISOString(),
      };
    }
  }

  /** The flow version a new session uses (none without a flow); 422 for another application's flow, an unknown one or a draft. */
  private async flowFor(request: CreateDecisionRequest, fresh: boolean): Promise<SessionFlow | null> {
    if (!request.flow_id) return null;
    const active = await this.flows.current(request.flow_id, { fresh });
    if (!active || active.applicationId !== request.application_id) {
      throw new DomainError('validation_failed', 'The flow does not exist', [{ field: 'flow_id', reason: 'no such flow in this application' }]);
    }
    if (active.status !== 'active') {
      throw new DomainError('validation_failed', 'The flow is a draft: activate it before asking anyone', [{ field: 'flow_id', reason: 'flow is not active' }]);
    }
    return active;
  }

  private newSession(
    request: CreateDecisionRequest,
    flow: SessionFlow | null,
    at: { now: Date; deadline: Date | null; expiresAt: Date; subjectId: string | null; email: string | null; externalId: string | null; tokenHash: string; tokenNonce: string },
  ): DecisionSession {
    const { now, deadline, expiresAt, subjectId, email, externalId, tokenHash, tokenNonce } = at;
    const path = decisionPathFor(request.kind, (flow?.pattern ?? null) as FlowPattern | null);
    return Object.assign(new DecisionSession(), {
      id: newOpaqueId('dcs', 20),
      tokenHash,
      tokenNonce,
      applicationId: request.application_id,
      kind: request.kind,
      path,
      status: 'pending',
      createdVia: request.via,
      flowId: request.flow_id ?? null,
      flowVersion: flow?.version ?? null,
      deliveryMode: request.delivery_mode,
      embedOrigin: request.embed_origin ?? null,
      redirectUri: request.redirect_uri ?? null,
      locale: request.locale ?? flow?.locale ?? 'en',
      subjectId,
      subjectEmail: email,
      subjectExternalId: externalId,
      signedInAt: null,
      participantProofHash: null,
      noticeShownAt: null,
      approval: request.approval
        ? {
            title: request.approval.title,
            description: request.approval.description ?? null,
            action: request.approval.action,
            value: request.approval.value ? { amount: request.approval.value.amount, currency: request.approval.value.currency } : null,
            trigger: request.approval.trigger,
            agent_id: request.approval.agent_id ?? null,
          }
        : null,
      deadlineAt: deadline,
      expiresAt,
      outcome: null,
      purposeDecisions: null,
      purposeOutcomes: null,
      withdrawals: [],
      counter: null,
      completedAt: null,
      recordId: null,
      consentTokenHash: null,
      consentTokenExpiresAt: null,
      consentTokenConsumedAt: null,
      createdAt: now,
      updatedAt: now,
    });
  }
}
