import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  AuthorizeCaptureReply,
  AuthorizeCaptureRequest,
  CAPTURES_RETRY_KEY_HELD,
  CaptureCreatedReply,
  CaptureRetryInput,
  CaptureRetryKeyHeldReply,
  CaptureRetryKeyHeldRequest,
  CreateCaptureRequest,
} from '@dcr/contracts';
import {
  assertCapturable,
  CAPTURE_RETRY_WINDOW_MS,
  DomainError,
  FlowTerms,
  hashCredential,
  newOpaqueId,
  notFound,
  randomString,
  recordAttestation,
  sealForBearer,
  unsealWithBearer,
  validationFailed,
  wordingVerdict,
  wrongCountry,
} from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { DataSource, IsNull, MoreThan } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { SubjectsService } from '../subjects/subjects.service';
import { Capture } from './capture.entity';
import { CaptureClaims, heldCapture } from './capture-claims';
import { CommitCaptureHeldElsewhere } from './capture-held-elsewhere';
import { CaptureChannel, captureExpired, committedForAnotherPerson, CommitCapture, recordedNothing } from './commit-capture';

const UNIQUE_VIOLATION = '23505';

const isUniqueViolation = (error: unknown, constraint: string) =>
  (error as { code?: string }).code === UNIQUE_VIOLATION && (error as { constraint?: string }).constraint === constraint;

/** What a capture token is sealed for under a retry's secret (sealForBearer). */
const CAPTURE_TOKEN_SEAL = 'capture-token';

/** A capture's answer: the same for the request that made it and for its retries. */
const createdReply = (token: string, capture: Capture): CaptureCreatedReply => ({
  capture_token: token,
  expires_at: capture.expiresAt.toISOString(),
  ...(capture.wordingVerdict ? { wording_verdict: capture.wordingVerdict } : {}),
});

/** An uncommitted capture is held this long, then it leaves no record. */
export const CAPTURE_TTL_MS = 24 * 3600 * 1000;

/**
 * The sweep of captures that leave no record: uncommitted past their 24 hours; one a country claimed
 * (a commit under way, which may still make its record) an hour later, so that a claim whose
 * settlement never arrived (the claimant's answer lost) does not keep the capture, and refuse it
 * as busy, for ever. A commit that did make its record in the claimant country keeps it there; the
 * capture here then answers 404.
 */
export const CAPTURE_SWEEP_SQL = `DELETE FROM "decisions"."captures"
  WHERE "record_id" IS NULL AND (("committed_in" IS NULL AND "expires_at" < now()) OR "expires_at" < now() - interval '1 hour')
  RETURNING 1`;

/**
 * A committed capture stays (its record names it), but its Idempotency-Key, and the token sealed for
 * it, only as long as the gateway keeps an answer: 24 hours ($1: the moment 24 hours ago).
 */
export const CAPTURE_RETRY_SWEEP_SQL = `UPDATE "decisions"."captures" SET "retry_key_digest" = NULL, "request_digest" = NULL, "sealed_token" = NULL
  WHERE "retry_key_digest" IS NOT NULL AND "created_at" <= $1`;

/**
 * Consent captured in the organisation's own form: the browser posts the sanitised snapshot (each
 * purpose's decision and presentation, label digests) with the publishable key and gets a capture
 * token; the organisation's server commits it with the person's e-mail (`authorize`), which records
 * it through the Record API's path with the capture's channel, in the person's home country: a
 * capture held here is committed here or claimed by the person's home (CaptureClaims); one held in
 * another country is claimed from there (CommitCaptureHeldElsewhere).
 */
@Injectable()
export class Captures implements OnApplicationBootstrap, OnApplicationShutdown {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly flows: FlowsRepository,
    private readonly claims: CaptureClaims,
    private readonly commit: CommitCapture,
    private readonly heldElsewhere: CommitCaptureHeldElsewhere,
    private readonly subjects: SubjectsService,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async create(request: CreateCaptureRequest): Promise<CaptureCreatedReply> {
    const { capture, token, reply } = await this.made(request);
    if (!request.commit) return reply;
    // Browser commit: recorded now, at the lower assurance its channel names (a retry's capture
    // committed before answers its record again: its record key is the capture's).
    try {
      const committed = await this.commitHere(capture, request.commit.subject, false, `${capture.channel}_browser` as CaptureChannel);
      return { ...reply, record_id: committed.record_id, channel: committed.channel };
    } catch (error) {
      // A person homed in another country: the capture is kept, uncommitted, and its token answered
      // with the 421, for the organisation's server to commit it at the person's home (authorize).
      if (error instanceof DomainError && error.code === 'wrong_country') {
        const home = String(error.extra?.home_country);
        // A retry of a browser commit the person's home made first (its answer lost, the retry sent
        // to this country's endpoint): that capture is the key's, and its record the person's. This
        // one goes, and the retry is sent there, which answers the first capture and record.
        if (request.retry && (await this.madeIn(home, request.application_id, request.retry))) {
          await this.dataSource.manager.delete(Capture, { id: capture.id, recordId: IsNull(), committedIn: IsNull() });
          throw new DomainError(
            'wrong_country',
            `The capture under this Idempotency-Key was made at ${home}'s endpoint, the person's home: send the retry there, which answers it`,
            undefined,
            { home_country: home },
          );
        }
        throw new DomainError(
          'wrong_country',
          `The person is homed in ${String(error.extra?.home_country)}: the capture was kept uncommitted; commit it from your server at that country's endpoint (authorize with capture_token)`,
          undefined,
          { ...error.extra, capture_token: token, expires_at: reply.expires_at },
        );
      }
      // Any other refusal leaves no capture.
      await this.dataSource.manager.delete(Capture, { id: capture.id, recordId: IsNull(), committedIn: IsNull() });
      throw error;
    }
  }

  /**
   * The capture of a request: a new one, or, for a retry under the same `Idempotency-Key` (the
   * gateway keeps no answer of a 5xx, so a retry after a lost answer reaches here again), the one the
   * first request made, whatever refused the retry on its own (the render proof already used, the
   * flow changed since) or made it lose the race to the key's unique index. Another body under the
   * key is a conflict (409), as at the gateway.
   */
  private async made(request: CreateCaptureRequest): Promise<{ capture: Capture; token: string; reply: CaptureCreatedReply }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.makeCapture(request);
      } catch (error) {
        if (!request.retry) throw error;
        const earlier = await this.earlier(request.application_id, request.retry);
        if (earlier) return earlier;
        // The key's capture went meanwhile (its commit refused) or is past the key's 24 hours: try again.
        if (!isUniqueViolation(error, 'UQ_captures_retry_key') || attempt === 3) throw error;
        await this.dataSource.query(`${CAPTURE_RETRY_SWEEP_SQL} AND "application_id" = $2 AND "retry_key_digest" = $3`, [
          new Date(Date.now() - CAPTURE_RETRY_WINDOW_MS),
          request.application_id,
          request.retry.key_digest,
        ]);
      }
    }
  }

  /**
   * Whether `country` made a capture under the retry's key in its last 24 hours (CAPTURES_RETRY_KEY_HELD:
   * the key's digest out, yes or no back). A peer that does not answer counts as no: the retry is then
   * kept here, as before the question was asked.
   */
  private async madeIn(country: string, applicationId: string, retry: CaptureRetryInput): Promise<boolean> {
    if (!this.context.env.PEER_COUNTRIES.includes(country)) return false;
    try {
      const reply = await firstValueFrom(
        this.clients.peer(country).send<CaptureRetryKeyHeldReply, CaptureRetryKeyHeldRequest>(CAPTURES_RETRY_KEY_HELD, { application_id: applicationId, key_digest: retry.key_digest }),
      );
      return reply.held === true;
    } catch {
      return false;
    }
  }

  /** A peer asks whether a capture was made here under a retry's key digest in the last 24 hours. */
  async heldUnderRetryKey(request: CaptureRetryKeyHeldRequest): Promise<CaptureRetryKeyHeldReply> {
    const held = await this.dataSource.manager.exists(Capture, {
      where: { applicationId: request.application_id, retryKeyDigest: request.key_digest, createdAt: MoreThan(new Date(Date.now() - CAPTURE_RETRY_WINDOW_MS)) },
    });
    return { held };
  }

  /** The capture made under a retry's key in the last 24 hours (undefined: none), or a conflict for another body. */
  private async earlier(applicationId: string, retry: CaptureRetryInput): Promise<{ capture: Capture; token: string; reply: CaptureCreatedReply } | undefined> {
    const capture = await this.dataSource.manager.findOne(Capture, {
      where: { applicationId, retryKeyDigest: retry.key_digest, createdAt: MoreThan(new Date(Date.now() - CAPTURE_RETRY_WINDOW_MS)) },
    });
    if (!capture) return undefined;
    if (capture.requestDigest !== retry.request_digest) {
      throw new DomainError('idempotency_conflict', 'This Idempotency-Key was used with a different request', [
        { field: 'Idempotency-Key', reason: 'already used with a different request' },
      ]);
    }
    const token = capture.sealedToken ? unsealWithBearer(retry.secret, CAPTURE_TOKEN_SEAL, capture.sealedToken) : undefined;
    if (!token) throw new Error(`capture ${capture.id} made under this Idempotency-Key has no token sealed for it`);
    return { capture, token, reply: createdReply(token, capture) };
  }

  private async makeCapture(request: CreateCaptureRequest): Promise<{ capture: Capture; token: string; reply: CaptureCreatedReply }> {
    const flow = await this.flows.active(request.flow_id);
    if (!flow || flow.applicationId !== request.application_id) {
      throw validationFailed([{ field: 'flow_id', reason: 'no active flow with this id in this application' }]);
    }
    // A consent field capture answers the version the field showed: a newer one means new wording.
    if (request.render && request.render.flow_version !== flow.version) {
      throw validationFailed([
        { field: 'render_proof', reason: `the field showed version ${request.render.flow_version} of the flow, version ${flow.version} is active now: reload the page` },
      ]);
    }
    if (request.channel === 'embedded_field' && !request.render) {
      throw validationFailed([{ field: 'render_proof', reason: "embedded_field captures are posted by the consent field's frame with its render proof" }]);
    }
    const terms = flow.terms as unknown as FlowTerms;
    assertCapturable(terms);
    // The body's own fields first, every bad label named at once; the capture rules once it is well-formed.
    const verdict = wordingVerdict(terms, request.labels);
    recordAttestation(terms, request.decisions as never);
    // The snapshot keeps each purpose's decision and presentation, nothing else the browser sent.
    const decisions = Object.fromEntries(
      Object.entries(request.decisions).map(([key, value]) => [key, { decision: value.decision, default_checked: value.default_checked === true, mandatory: value.mandatory === true }]),
    );
    const token = `cap_${this.context.env.COUNTRY.toLowerCase()}${randomString(30)}`;
    const now = new Date();
    const capture = Object.assign(new Capture(), {
      id: newOpaqueId('cpt', 20),
      tokenHash: hashCredential(token),
      applicationId: request.application_id,
      flowId: flow.id,
      flowVersion: flow.version,
      channel: request.channel,
      decisions,
      wordingVerdict: verdict,
      origin: request.origin ?? null,
      renderNonce: request.render?.nonce ?? null,
      renderingEvidence: request.rendering_evidence ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CAPTURE_TTL_MS),
      recordId: null,
      committedIn: null,
      commitAttempts: 0,
      retryKeyDigest: request.retry?.key_digest ?? null,
      requestDigest: request.retry?.request_digest ?? null,
      sealedToken: request.retry ? sealForBearer(request.retry.secret, CAPTURE_TOKEN_SEAL, token) : null,
    });
    const used = 'The render proof was already used: each rendering of the consent field captures once (the field renews its proof)';
    if (capture.renderNonce && (await this.dataSource.manager.exists(Capture, { where: { renderNonce: capture.renderNonce } }))) {
      throw new DomainError('unauthenticated', used);
    }
    try {
      // The unique indexes decide between two uses of one proof, or two requests under one key, at the same moment.
      await this.dataSource.manager.insert(Capture, capture);
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_captures_render_nonce')) throw new DomainError('unauthenticated', used);
      throw error;
    }
    return { capture, token, reply: createdReply(token, capture) };
  }

  async authorize(request: AuthorizeCaptureRequest): Promise<AuthorizeCaptureReply> {
    const holder = request.capture_token.slice(4, 6).toUpperCase();
    if (holder !== this.context.env.COUNTRY) return this.heldElsewhere.execute(holder, request);
    const capture = await this.dataSource.manager.findOne(Capture, { where: { tokenHash: hashCredential(request.capture_token) } });
    if (!capture || capture.applicationId !== request.application_id) throw notFound('Capture');
    if (!capture.recordId && !capture.committedIn && capture.expiresAt.getTime() <= Date.now()) {
      throw captureExpired();
    }
    // A capture committed before (by the browser too) answers its record, with the channel it was recorded on.
    return this.commitHere(capture, request.subject, request.suppress_receipt === true, capture.channel as CaptureChannel);
  }

  /**
   * Commits a capture held here, in this country: claimed for it first (a capture is committed in
   * one country), released again when the commit wrote nothing (the person homed elsewhere: their
   * home country may claim it then).
   */
  private async commitHere(capture: Capture, subject: { email: string; external_id?: string }, suppressReceipt: boolean, channel: CaptureChannel): Promise<AuthorizeCaptureReply> {
    const here = this.context.env.COUNTRY;
    for (let attempt = 1; !(await this.claims.claim({ id: capture.id }, here, 'here')); attempt++) {
      const country = await this.claims.committedIn(capture.id);
      if (country && country !== here) throw await this.committedElsewhere(capture, subject, country);
      // Released between the claim and the look (the other country's commit wrote nothing): claim again.
      if (attempt === 3) throw new DomainError('service_unavailable', 'The capture is being committed by another country at this moment; try again');
    }
    let committed: AuthorizeCaptureReply;
    try {
      committed = await this.commit.execute(capture.applicationId, heldCapture(capture), subject, { suppressReceipt, channel });
    } catch (error) {
      await this.claims.settle({ id: capture.id }, here, { release: recordedNothing(error) });
      throw error;
    }
    await this.claims.settle({ id: capture.id }, here, { recordId: committed.record_id });
    return committed;
  }

  /**
   * A capture held here that the person's home country `country` claimed: the same person is sent
   * there (421), where it answers their record; anyone else is another person (409).
   */
  private async committedElsewhere(capture: Capture, subject: { email: string; external_id?: string }, country: string): Promise<DomainError> {
    const home = await this.subjects.homeOf(capture.applicationId, subject);
    return home === country ? wrongCountry(country) : committedForAnotherPerson();
  }

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), 60_000);
    this.sweeper.unref();
  }

  onApplicationShutdown(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /**
   * Uncommitted captures past their 24 hours are deleted: they leave no record (CAPTURE_SWEEP_SQL);
   * the Idempotency-Keys of captures made more than 24 hours ago are forgotten (CAPTURE_RETRY_SWEEP_SQL).
   */
  async sweep(): Promise<number> {
    const removed: unknown[] = await this.dataSource.query(CAPTURE_SWEEP_SQL);
    await this.dataSource.query(CAPTURE_RETRY_SWEEP_SQL, [new Date(Date.now() - CAPTURE_RETRY_WINDOW_MS)]);
    return removed.length;
  }
}
