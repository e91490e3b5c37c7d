import { Injectable } from '@nestjs/common';
import { CompleteReply, CompleteRequest, ExchangeReply, ExchangeRequest, VerifyReply, VerifyRequest } from '@dcr/contracts';
import {
  assertCompletable,
  completionStatus,
  DecisionOutcome,
  DecisionStatus,
  DomainError,
  eventTypeFor,
  decidePurposes,
  FlowTerms,
  hashCredential,
  hostedPurposes,
  PurposeStatus,
  countryOfSessionToken,
  newRecordId,
  normaliseOutcome,
  notFound,
} from '@dcr/domain';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { supersedeOlderDecisions } from '../records/hosted-supersession';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { DecisionSession } from './decision-session.entity';
import { recordTransition, sessionRecordOf } from './session-events';
import { requireParticipantProof } from './participant-proof';
import { participantTransitions } from './session-view';
import { SessionsRepository } from './sessions.repository';

/** The consent (exchange) token lives five minutes and is used once. */
export const CONSENT_TOKEN_TTL_MS = 5 * 60 * 1000;

/** `uri` with `name=value` added to its query (before any fragment, where a server can read it). */
function withQuery(uri: string, name: string, value: string): string {
  const hash = uri.indexOf('#');
  const [base, fragment] = hash < 0 ? [uri, ''] : [uri.slice(0, hash), uri.slice(hash)];
  return `${base}${base.includes('?') ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(value)}${fragment}`;
}

/** Deciding, and the consent token that lets the organisation learn the outcome server-side. */
@Injectable()
export class Completion {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sessions: SessionsRepository,
    private readonly flows: FlowsRepository,
    private readonly relay: OutboxRelay,
  ) {}

  async complete(request: CompleteRequest): Promise<CompleteReply> {
    const consentToken = randomBytes(32).toString('base64url');
    const session = await this.dataSource.transaction(async (manager) => {
      const session = await this.sessions.lock(manager, request.session_token);
      if (!session) throw notFound('Decision');
      const now = new Date();
      if (session.expiresAt.getTime() <= now.getTime()) {
        throw new DomainError('illegal_transition', 'This request has expired', [], { status: 'expired', allowed: [] });
      }
      const outcome = normaliseOutcome(session.kind, request.outcome);
      try {
        assertCompletable(session.status as DecisionStatus, session.path);
      } catch (error) {
        // `allowed` names the steps POST …/transitions takes from here, as its own 409 does (ending
        // a request is complete or cancel, not a transition).
        if (error instanceof DomainError && error.code === 'illegal_transition') throw new DomainError(error.code, error.message, error.details, { ...error.extra, allowed: participantTransitions(session) });
        throw error;
      }
      // Decided by the browser that signed in, not by whoever else holds the session token.
      requireParticipantProof(session, request.participant_proof);

      let purposes: Record<string, PurposeStatus> | null = null;
      let terms: FlowTerms | undefined;
      if (session.kind === 'consent') {
        const flow = session.flowId && session.flowVersion ? await this.flows.version(session.flowId, session.flowVersion, manager) : null;
        if (!flow) throw new DomainError('internal_error', 'The flow version of this session is missing');
        terms = flow.terms as unknown as FlowTerms;
        purposes = decidePurposes(terms, outcome, request.purposes);
      } else if (request.purposes) {
        throw new DomainError('validation_failed', 'An approval has no purposes', [{ field: 'purposes', reason: 'not allowed for approvals' }]);
      }
      if (outcome === 'countered' && !request.counter) {
        throw new DomainError('validation_failed', 'A counter needs the counter-proposal', [{ field: 'counter', reason: 'required when the outcome is countered' }]);
      }
      if (outcome === 'countered' && request.counter && request.counter.note === undefined && request.counter.value === undefined) {
        throw new DomainError('validation_failed', 'A counter needs the counter-proposal', [{ field: 'counter', reason: 'must have a note or a value' }]);
      }
      if (outcome !== 'countered' && request.counter) {
        throw new DomainError('validation_failed', 'Only a counter carries a counter-proposal', [{ field: 'counter', reason: 'only with outcome countered' }]);
      }
      const from = session.status;
      Object.assign(session, {
        status: completionStatus(outcome),
        outcome,
        purposeDecisions: purposes ? Object.fromEntries(Object.entries(purposes).map(([k, v]) => [k, v === 'granted'])) : null,
        // The outcomes themselves (an objection and a notice are both `false` above), for consent_status.
        purposeOutcomes: purposes,
        counter: request.counter ?? null,
        completedAt: now,
        // The record lives where the session does: its id names that country, like the session token.
        recordId: newRecordId(countryOfSessionToken(request.session_token) ?? 'US'),
        consentTokenHash: hashCredential(consentToken),
        consentTokenExpiresAt: new Date(now.getTime() + CONSENT_TOKEN_TTL_MS),
        consentTokenConsumedAt: null,
        updatedAt: now,
      });
      await this.sessions.save(manager, session);
      await recordTransition(manager, session, from, session.status, { type: 'participant', id: session.subjectId ?? undefined }, now);
      await this.recordOutcome(manager, session, purposes, now);
      // A consent decided by a person known here takes back from their older decisions of the flow
      // what it no longer grants, as a newer record does (their newest record, their earlier hosted consents).
      if (purposes && terms) await supersedeOlderDecisions(manager, session, hostedPurposes({ purpose_outcomes: purposes, purpose_decisions: session.purposeDecisions, terms }), now);
      return session;
    });
    this.relay.kick();
    const reply: CompleteReply = { outcome: session.outcome as string, exchange_token: consentToken, completed_at: session.completedAt!.toISOString() };
    if (session.deliveryMode === 'redirect' && session.redirectUri) {
      reply.redirect_to = session.status === 'fulfilled' ? session.redirectUri : withQuery(session.redirectUri, 'error', 'access_denied');
    }
    return reply;
  }

  /** Consumes the consent token: the first check answers the session's status, later ones `expired`. */
  async verify(request: VerifyRequest, applicationId: string): Promise<VerifyReply> {
    const consumed = await this.sessions.consumeConsentTokenStatus(request.session_token, applicationId, hashCredential(request.consent_token));
    if (!consumed) {
      await this.requireSessionOf(request.session_token, applicationId);
      return { valid: false, status: 'expired' };
    }
    return { valid: consumed.status === 'fulfilled', status: consumed.status, outcome: consumed.outcome ?? undefined };
  }

  async exchange(request: ExchangeRequest): Promise<ExchangeReply> {
    const session = await this.consume(request.session_token, request.exchange_token, request.application_id);
    if (!session) throw new DomainError('gone', 'The exchange token has expired or was already used');
    const purposes = session.purposeDecisions ?? undefined;
    return {
      status: session.status,
      outcome: session.outcome as string,
      record_id: session.recordId as string,
      claims: {
        session_id: session.id,
        kind: session.kind,
        outcome: session.outcome,
        flow_id: session.flowId,
        flow_version: session.flowVersion,
        ...(purposes ? { purposes } : {}),
        // Each purpose's status as the record and its webhook say it: `purposes` is true only for a
        // consent granted, so an objection and a legitimate interest that stands read alike there.
        ...(session.purposeOutcomes ? { purpose_statuses: session.purposeOutcomes } : {}),
        ...(session.approval ? { approval: session.approval } : {}),
        ...(session.counter ? { counter: session.counter } : {}),
        subject: session.subjectId ? { id: session.subjectId, ...(session.signedInAt ? { email: session.subjectEmail } : {}) } : null,
        completed_at: session.completedAt?.toISOString() ?? null,
      },
      attestations: session.signedInAt
        ? [{ type: 'email_verified', method: 'one_time_code', verified_at: session.signedInAt.toISOString() }]
        : [],
      // Verifiable credentials belong to the Verify surface, which presents none yet.
      credentials: [],
    };
  }

  /**
   * The session whose unexpired, unused consent token this is, now marked used; null for anything
   * else (unknown, replayed, too old), so that no answer tells a guess apart from a replay. One
   * conditional UPDATE: two concurrent checks of one token cannot both win.
   */
  private async consume(token: string, consentToken: string, applicationId: string): Promise<DecisionSession | null> {
    const consumed = await this.sessions.consumeConsentToken(token, applicationId, hashCredential(consentToken));
    if (consumed) return consumed;
    await this.requireSessionOf(token, applicationId);
    return null;
  }

  /** A session of another application is answered as not found, like one that does not exist. */
  private async requireSessionOf(token: string, applicationId: string): Promise<void> {
    const session = await this.sessions.find(token);
    if (!session || session.applicationId !== applicationId) throw notFound('Decision');
  }

  private recordOutcome(manager: EntityManager, session: DecisionSession, purposes: Record<string, PurposeStatus> | null, at: Date) {
    const type = eventTypeFor(session.kind, session.outcome as DecisionOutcome);
    return recordEvent(manager, {
      type,
      applicationId: session.applicationId,
      occurredAt: at,
      data: {
        ...sessionRecordOf(session),
        kind: session.kind,
        outcome: session.outcome,
        subject: session.subjectId ? { id: session.subjectId } : null,
        ...(purposes ? { purposes } : {}),
        ...(session.approval ? { approval: session.approval } : {}),
        ...(session.counter ? { counter: session.counter } : {}),
        requested_at: session.createdAt.toISOString(),
        ...(session.noticeShownAt ? { notice_shown_at: session.noticeShownAt.toISOString() } : {}),
        completed_at: at.toISOString(),
        delivery_mode: session.deliveryMode,
        locale: session.locale,
      },
    });
  }
}
