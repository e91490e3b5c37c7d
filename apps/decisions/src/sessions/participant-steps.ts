import { Inject, Injectable } from '@nestjs/common';
import { CancelRequest, ParticipantViewMessage, ProofReply, ProofRequest, SignInReply, SignInRequest, TransitionRequest } from '@dcr/contracts';
import { assertTransition, consentLapsesAt, DecisionStatus, DomainError, FlowTerms, inboxAddressDigest, isInFlight, newOpaqueId, notFound, normaliseEmail } from '@dcr/domain';
import { requireParticipantProof, newParticipantProof } from './participant-proof';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { DataSource, EntityManager } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { MailTransport } from '../mail/mail-transport';
import {
  newOneTimeCode,
  ONE_TIME_CODE_MAX_ATTEMPTS,
  ONE_TIME_CODE_TTL_MS,
  ONE_TIME_CODES_PER_HOUR,
  oneTimeCodeHash,
  oneTimeCodeMatches,
} from '../mail/one-time-code';
import { OutboxRelay, recordEvent } from '../outbox/outbox';
import { SubjectsService } from '../subjects/subjects.service';
import { DecisionSession } from './decision-session.entity';
import { signInMail } from './sign-in-mail';

/** Addresses a session sent to a named person refuses in an hour before it takes none (requireNamedPerson). */
const REFUSED_ADDRESSES_PER_HOUR = 5;
import { decidedConsents, recordSessionRevoked, recordTransition, sessionRecordOf, sessionRevocation } from './session-events';
import { participantTransitions, toParticipantView } from './session-view';
import { SessionsRepository } from './sessions.repository';



/**
 * What the person does on the hosted pages before deciding: open the session, sign in with a
 * mailed one-time code, move along the path, cancel. The hosted pages are a thin client over this.
 */
@Injectable()
export class ParticipantSteps {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sessions: SessionsRepository,
    private readonly flows: FlowsRepository,
    private readonly subjects: SubjectsService,
    private readonly mail: MailTransport,
    private readonly relay: OutboxRelay,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async view(token: string): Promise<ParticipantViewMessage> {
    let session = await this.sessions.find(token);
    if (!session) throw notFound('Decision');
    if (isInFlight(session.status) && session.expiresAt.getTime() <= Date.now()) {
      session = await this.inTransaction(token, (manager, locked) => this.expire(manager, locked, { type: 'system' }, 'time'));
    }
    return this.viewOf(session, token);
  }

  async transition(request: TransitionRequest): Promise<ParticipantViewMessage> {
    const to = request.to as DecisionStatus;
    if (to === 'fulfilled' || to === 'expired') {
      throw new DomainError('validation_failed', 'Use complete or cancel to end a decision', [
        { field: 'to', reason: to === 'fulfilled' ? 'decide with POST …/complete' : 'cancel with POST …/cancel' },
      ]);
    }
    // A wrong code is counted in the transaction and refused after it commits, so the count stays.
    let refusal: DomainError | undefined;
    let proof: string | undefined;
    const session = await this.inTransaction(request.session_token, async (manager, locked) => {
      this.requireOpen(locked);
      this.requireStep(locked, to);
      // After signing in, only the browser that signed in moves on. Withdrawing a consent given is
      // not bound to it: the person may withdraw from any device (the event names no one then).
      if (to !== 'revoked') requireParticipantProof(locked, request.participant_proof);
      if (to === 'revoked' && locked.kind !== 'consent') {
        throw new DomainError('illegal_transition', 'Only a consent can be withdrawn', [], { status: locked.status, allowed: [] });
      }
      const terms = to === 'revoked' ? await this.requireGrantedConsent(manager, locked) : undefined;
      const now = new Date();
      if (to === 'verifying') {
        const checked = await this.checkCode(manager, locked, request, now);
        if ('refused' in checked) {
          refusal = checked.refused;
          return locked;
        }
        proof = checked.proof;
      }
      const from = locked.status;
      locked.status = to;
      locked.updatedAt = now;
      // The step whose page shows the flow's notice: the receipt's `notice shown`.
      if ((to === 'reviewing' || to === 'informed') && locked.kind === 'consent' && !locked.noticeShownAt) locked.noticeShownAt = now;
      await this.sessions.save(manager, locked);
      // The person, by their opaque id once they signed in (a session they have not signed in to is anyone's who holds its link).
      const actor = { type: 'participant' as const, ...(locked.signedInAt && locked.subjectId ? { id: locked.subjectId } : {}) };
      await recordTransition(manager, locked, from, to, actor, now);
      // What it withdraws, scoped by purpose while a noticed legitimate-interest purpose stands; where
      // it was made from is not known (the organisation holds the session token as well as the person).
      if (terms) await recordSessionRevoked(manager, locked, now, sessionRevocation(terms, locked));
      return locked;
    });
    if (refusal) throw refusal;
    this.relay.kick();
    const view = await this.viewOf(session, request.session_token);
    return proof ? { ...view, participant_proof: proof } : view;
  }

  /**
   * The person signs in again, on a session signed in to already (in another browser, or before the
   * page was reloaded without its proof): with a code mailed to the address that signed in, this
   * browser gets a new participant proof, and the one before stops counting.
   */
  async proof(request: ProofRequest): Promise<ProofReply> {
    let refusal: DomainError | undefined;
    let proof: string | undefined;
    await this.inTransaction(request.session_token, async (manager, locked) => {
      this.requireOpen(locked);
      if (!locked.signedInAt || !isInFlight(locked.status) || locked.status === 'authenticating') {
        throw new DomainError('illegal_transition', 'Only a request someone signed in to takes a new proof; sign in with the transition to verifying', [], {
          status: locked.status,
          allowed: participantTransitions(locked),
        });
      }
      const email = normaliseEmail(request.email);
      await this.requireNamedPerson(locked, email);
      refusal = await this.consumeCode(manager, locked, request.session_token, email, request.code, new Date());
      if (refusal) return locked;
      proof = newParticipantProof(locked);
      await this.sessions.save(manager, locked);
      return locked;
    });
    if (refusal) throw refusal;
    return { participant_proof: proof as string };
  }

  /**
   * A revocation takes back a consent given: a decision that granted none (a refusal, or a flow of
   * notice-only purposes, whose receipt is a notice record) has nothing to withdraw, as on the
   * records page (409), nor one whose every given purpose the person withdrew there one at a time.
   */
  private async requireGrantedConsent(manager: EntityManager, session: DecisionSession): Promise<FlowTerms> {
    const flow = session.flowId && session.flowVersion ? await this.flows.version(session.flowId, session.flowVersion, manager) : null;
    const decided = session.purposeDecisions ?? {};
    // What the person withdrew one at a time on their records page is not given any more.
    const withdrawn = new Set(session.withdrawals.map((mark) => mark.purpose));
    const granted = flow ? decidedConsents(flow.terms as unknown as FlowTerms, decided).filter((purpose) => decided[purpose.key] && !withdrawn.has(purpose.key)) : [];
    if (!flow || granted.length === 0) throw new DomainError('conflict', 'Nothing on this record is granted: there is no consent to withdraw');
    // A consent whose term has run out is expired, no longer granted (consent_status, the records page
    // and the receipt's `consent expired` say so): nothing is withdrawn, no event goes out.
    const lapsesAt = session.completedAt ? consentLapsesAt(session.completedAt, (flow.terms as unknown as FlowTerms).consent_duration) : undefined;
    if (lapsesAt !== undefined && Date.parse(lapsesAt) <= Date.now()) {
      throw new DomainError('conflict', `This consent expired at ${lapsesAt} (its term ran out): there is no consent to withdraw`);
    }
    return flow.terms as unknown as FlowTerms;
  }

  /** Mails a one-time code for the `authenticating → verifying` step. */
  async signIn(request: SignInRequest): Promise<SignInReply> {
    const session = await this.sessions.find(request.session_token);
    if (!session) throw notFound('Decision');
    this.requireOpen(session);
    // Signed in already: a code for a new participant proof (POST …/proof), to the same address only.
    const again = session.signedInAt !== null && (session.status === 'verifying' || session.status === 'reviewing');
    if (session.status !== 'authenticating' && !again) {
      throw new DomainError('illegal_transition', 'Sign-in codes are sent while the session is authenticating', [], {
        status: session.status,
        allowed: [],
      });
    }
    const email = normaliseEmail(request.email);
    await this.requireNamedPerson(session, email);
    const now = new Date();
    const recent = await this.sessions.countCodesSince(session.id, new Date(now.getTime() - 3600_000));
    if (recent >= ONE_TIME_CODES_PER_HOUR) {
      throw new DomainError('rate_limited', 'Too many sign-in codes for this request; wait before asking again', undefined, {
        retry_after: 3600,
      });
    }
    const code = newOneTimeCode();
    const expiresAt = new Date(now.getTime() + ONE_TIME_CODE_TTL_MS);
    await this.sessions.insertCode({
      id: newOpaqueId('otp', 20),
      sessionId: session.id,
      // Only the address's keyed digest: a person homed in another country who signs in here is
      // refused when the code is checked (wrong_country), and leaves no address here.
      email: null,
      emailDigest: inboxAddressDigest(this.context.env.SUBJECT_REF_KEY, email),
      // Bound to the token presented, as before the row stopped keeping it (codes mailed then still match).
      codeHash: oneTimeCodeHash(this.context.env.SUBJECT_REF_KEY, code, 'sign-in', request.session_token, email),
      attempts: 0,
      expiresAt,
      consumedAt: null,
      createdAt: now,
    });
    await this.mail.send({ to: email, ...signInMail(request.locale ?? session.locale, code, ONE_TIME_CODE_TTL_MS / 60000) });
    return { sent: true, expires_at: expiresAt.toISOString() };
  }

  async cancel(request: CancelRequest): Promise<ParticipantViewMessage> {
    const session = await this.inTransaction(request.session_token, (manager, locked) => {
      this.requireOpen(locked);
      // Only a request still in progress can be cancelled: a decided one is final (a fulfilled
      // consent is withdrawn with `revoked`), and an ended one has nothing left to end.
      if (!isInFlight(locked.status)) {
        throw new DomainError('illegal_transition', `Only a request still in progress can be cancelled; this one is ${locked.status}`, [], {
          status: locked.status,
          from: locked.status,
          to: 'expired',
          allowed: participantTransitions(locked),
        });
      }
      // The person's own cancel, once they signed in, comes from the browser that signed in; the host's needs no proof.
      if (request.cancelled_by !== 'host') requireParticipantProof(locked, request.participant_proof);
      return this.expire(manager, locked, { type: request.cancelled_by === 'host' ? 'host' : 'participant' }, request.reason ?? 'cancelled');
    });
    return this.viewOf(session, request.session_token);
  }

  /** Ends an in-flight session as `expired`, with the reason in the audit event. */
  async expire(manager: EntityManager, session: DecisionSession, actor: { type: 'system' | 'participant' | 'host' }, reason: string) {
    const now = new Date();
    const from = session.status;
    session.status = 'expired';
    session.updatedAt = now;
    await this.sessions.save(manager, session);
    await recordTransition(manager, session, from, 'expired', actor, now);
    await recordEvent(manager, {
      type: 'decision.ended',
      applicationId: session.applicationId,
      internal: true,
      occurredAt: now,
      data: { session_id: session.id, reason: reason.slice(0, 200) },
    });
    // The agent or workflow that asked learns that no one will decide: at the deadline (or the
    // session's end), or cancelled by the person or the host page, with the reason given.
    if (session.kind === 'approval') {
      const ended = actor.type === 'system' ? 'deadline' : actor.type === 'host' ? 'cancelled_by_host' : 'cancelled_by_person';
      await recordEvent(manager, {
        type: 'approval.expired',
        applicationId: session.applicationId,
        occurredAt: now,
        data: {
          ...sessionRecordOf(session),
          kind: 'approval',
          outcome: null,
          ended,
          ...(ended === 'deadline' ? {} : { reason: reason.slice(0, 200) }),
          actor: actor.type === 'participant' && session.signedInAt && session.subjectId ? { type: 'participant', id: session.subjectId } : { type: actor.type },
          subject: session.subjectId ? { id: session.subjectId } : null,
          ...(session.approval ? { approval: session.approval } : {}),
          requested_at: session.createdAt.toISOString(),
          ended_at: now.toISOString(),
          delivery_mode: session.deliveryMode,
        },
      });
    }
    return session;
  }

  /** The participant's view of a session, reached with `token`. */
  async viewOf(session: DecisionSession, token: string): Promise<ParticipantViewMessage> {
    const flow = session.flowId && session.flowVersion ? await this.flows.version(session.flowId, session.flowVersion) : null;
    return toParticipantView(session, token, flow);
  }

  private async inTransaction(
    token: string,
    work: (manager: EntityManager, locked: DecisionSession) => Promise<DecisionSession>,
  ): Promise<DecisionSession> {
    return this.dataSource.transaction(async (manager) => {
      const locked = await this.sessions.lock(manager, token);
      if (!locked) throw notFound('Decision');
      return work(manager, locked);
    });
  }

  /**
   * `to` must be a step `POST …/transitions` takes from the session's status: a 409 names those
   * (the view's `allowed_transitions`), not the graph's edges that other calls take (`expired` by
   * cancel or a decline, `fulfilled` by complete).
   */
  private requireStep(session: DecisionSession, to: DecisionStatus): void {
    try {
      assertTransition(session.status as DecisionStatus, to, session.path);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'illegal_transition') {
        throw new DomainError('illegal_transition', error.message, [], { ...error.extra, allowed: participantTransitions(session) });
      }
      throw error;
    }
  }

  private requireOpen(session: DecisionSession): void {
    if (isInFlight(session.status) && session.expiresAt.getTime() <= Date.now()) {
      throw new DomainError('illegal_transition', 'This request has expired', [], { status: 'expired', allowed: [] });
    }
  }

  /** When the organisation named the person, only that person may sign in. */
  /**
   * A session the organisation sent to a named person takes that address only (403 otherwise). Each
   * address refused is counted (a row of the session's `:refused` codes, holding nothing), and after
   * REFUSED_ADDRESSES_PER_HOUR in an hour the session takes no address at all for the rest of it
   * (429): otherwise whoever holds the link could try addresses until one is not refused, and so
   * learn whom the request is for.
   */
  private async requireNamedPerson(session: DecisionSession, email: string): Promise<void> {
    if (!session.subjectEmail) return;
    const now = new Date();
    const refusedOn = `${session.id}:refused`;
    if ((await this.sessions.countCodesSince(refusedOn, new Date(now.getTime() - 3600_000))) >= REFUSED_ADDRESSES_PER_HOUR) {
      throw new DomainError('rate_limited', 'Too many addresses were tried on this request; wait before signing in again', undefined, { retry_after: 3600 });
    }
    if (session.subjectEmail === email) return;
    await this.sessions.insertCode({ id: newOpaqueId('otp', 20), sessionId: refusedOn, email: null, emailDigest: null, codeHash: '', attempts: 0, expiresAt: now, consumedAt: now, createdAt: now });
    throw new DomainError('forbidden', 'This request was sent to someone else: sign in with the address it was sent to', [
      { field: 'email', reason: 'not the person this request is for' },
    ]);
  }

  /** Checks the code and binds the person; a wrong code is counted and returned, not thrown. The proof goes to the browser that signed in. */
  private async checkCode(manager: EntityManager, session: DecisionSession, request: TransitionRequest, now: Date): Promise<{ refused: DomainError } | { proof: string }> {
    if (!request.email || !request.code) {
      throw new DomainError('validation_failed', 'Signing in needs the e-mail address and the code mailed to it', [
        ...(!request.email ? [{ field: 'email', reason: 'required to move to verifying' }] : []),
        ...(!request.code ? [{ field: 'code', reason: 'required to move to verifying' }] : []),
      ]);
    }
    const email = normaliseEmail(request.email);
    await this.requireNamedPerson(session, email);
    const refused = await this.consumeCode(manager, session, request.session_token, email, request.code, now);
    if (refused) return { refused };

    // Binding the person: their home must be this country (otherwise `wrong_country`). A session the
    // organisation sent to a person named by their external id only is that person's: the address
    // must be theirs (one another person of the application has is refused), or becomes theirs.
    const named = session.subjectExternalId ?? undefined;
    const { subject } = await this.subjects.create({ application_id: session.applicationId, email, ...(named ? { external_id: named } : {}) }, manager).catch((error: unknown) => {
      if (named && error instanceof DomainError && error.code === 'validation_failed') {
        throw new DomainError('forbidden', 'This request was sent to someone else: sign in with the address of the person it was sent to', [
          { field: 'email', reason: 'not the person this request is for' },
        ]);
      }
      throw error;
    });
    session.subjectId = subject.id;
    session.subjectEmail = email;
    session.signedInAt = now;
    return { proof: newParticipantProof(session) };
  }

  /** The latest code of the session, for this address, used up if it matches; a wrong one is counted and returned, not thrown. */
  private async consumeCode(manager: EntityManager, session: DecisionSession, token: string, email: string, given: string, now: Date): Promise<DomainError | undefined> {
    const code = await this.sessions.latestCode(manager, session.id);
    const wrong = (reason: string) => new DomainError('validation_failed', 'The code is not valid', [{ field: 'code', reason }]);
    if (!code || code.emailDigest !== inboxAddressDigest(this.context.env.SUBJECT_REF_KEY, email) || code.consumedAt) throw wrong('request a code for this address first');
    if (code.expiresAt.getTime() <= now.getTime()) throw wrong('the code has expired: request a new one');
    if (code.attempts >= ONE_TIME_CODE_MAX_ATTEMPTS) throw wrong('too many attempts: request a new code');
    if (!oneTimeCodeMatches(this.context.env.SUBJECT_REF_KEY, code.codeHash, given, 'sign-in', token, email)) {
      code.attempts += 1;
      await this.sessions.saveCode(manager, code);
      return wrong(code.attempts >= ONE_TIME_CODE_MAX_ATTEMPTS ? 'too many attempts: request a new code' : 'the code does not match');
    }
    code.consumedAt = now;
    await this.sessions.saveCode(manager, code);
    return undefined;
  }
}
