import { Body, Controller, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  CompleteReply,
  DECISIONS_CANCEL,
  DECISIONS_COMPLETE,
  DECISIONS_PROOF,
  DECISIONS_SIGN_IN,
  DECISIONS_TRANSITION,
  DECISIONS_VIEW,
  ParticipantViewMessage,
  ProofReply,
  SignInReply,
} from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { CredentialIndex } from '../connect/credential-index';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { ErrorBodyDto } from '../openapi/openapi.decorators';
import { DecisionAccess } from './decision-access';
import { embedOriginNow } from './embed-origin';
import { CancelDto, CompleteDto, FrameEventDto, ProofDto, SignInDto, TransitionDto } from './decisions.dto';

const ILLEGAL = {
  status: 409,
  description: 'Not a legal move from the current status: the body carries `status`, `from`, `to` and `allowed` (the legal next states)',
  type: ErrorBodyDto,
};
const WRONG_COUNTRY = { status: 421, description: 'The session lives in another country: `home_country` only', type: ErrorBodyDto };
/** The proof the sign-in answered with: the steps after it need it, not only the session token (which the organisation holds too). */
const PROOF_HEADER = {
  name: 'X-Participant-Proof',
  required: false,
  description:
    "Once the person signed in: the `participant_proof` that step answered with (or POST …/proof). Without it, or with another, the step is a 403 naming the header: only the browser that signed in decides.",
};
const NOT_PROVEN = { status: 403, description: 'Signed in from another browser: the step needs `X-Participant-Proof`', type: ErrorBodyDto };
/** The proof header as the decisions service takes it (absent when not sent). */
const proven = (proof: string | undefined) => (typeof proof === 'string' && proof.length > 0 ? { participant_proof: proof } : {});

/**
 * The participant API: what the person does, authenticated by the session token in the path (the
 * capability the organisation handed them). The hosted pages are a thin client over it. Every route
 * is also served under the deprecated /api/v1/consent_sessions family.
 */
/**
 * A page posts a handful of messages in a session (ready, its steps, the outcome, resizes), so a
 * session's drop reports count up to this many in all; beyond that they are refused silently
 * (answered 204 all the same), or anyone holding a session token could drive the alerting counter.
 */
const DROPS_PER_SESSION = 200;

/** Per session token, how much of its budget is used; bounded (cleared when it holds 10,000 sessions). */
export class DropBudget {
  private readonly used = new Map<string, number>();

  constructor(private readonly perSession: number) {}

  /** How many of `count` the session may still add (0 when its budget is spent). */
  take(session: string, count: number): number {
    if (this.used.size >= 10_000 && !this.used.has(session)) this.used.clear();
    const used = this.used.get(session) ?? 0;
    const granted = Math.max(0, Math.min(count, this.perSession - used));
    this.used.set(session, used + granted);
    return granted;
  }
}

@ApiTags('Decisions: participant')
@PublicRoute()
@ApiResponse(WRONG_COUNTRY)
@ApiResponse({ status: 404, description: 'No such session', type: ErrorBodyDto })
@ApiResponse({ status: 422, description: 'The body breaks its rules; details name the fields', type: ErrorBodyDto })
@Controller(['api/v1/decisions/:session_token', 'api/v1/consent_sessions/:session_token'])
export class ParticipantController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly access: DecisionAccess,
    private readonly metrics: GatewayMetrics,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The decision as the person sees it: kind, status, allowed transitions, flow terms or approval, deadline' })
  @ApiOkResponse({ description: 'ParticipantView' })
  async view(@Param('session_token') token: string): Promise<ParticipantViewMessage> {
    return this.send<ParticipantViewMessage>(DECISIONS_VIEW, { session_token: await this.access.requireHomedHere(token) });
  }

  @Post('transitions')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Move to the legal next state',
    description: 'Standard path: authenticating, then verifying with {email, code}, then reviewing. Informed path: informed, then evidenced. A fulfilled consent can be withdrawn with revoked.',
  })
  @ApiResponse(ILLEGAL)
  @ApiOkResponse({ description: 'The participant view after the step' })
  @ApiHeader(PROOF_HEADER)
  @ApiResponse(NOT_PROVEN)
  async transition(
    @Param('session_token') token: string,
    @Body() body: TransitionDto,
    @Headers('x-participant-proof') proof: string | undefined,
  ): Promise<ParticipantViewMessage> {
    return this.send(DECISIONS_TRANSITION, { session_token: await this.access.requireHomedHere(token), ...body, ...proven(proof) });
  }

  @Post('proof')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in again on a session signed in to already: a new participant proof for this browser',
    description:
      'For a person who signed in elsewhere (another device, or a page that lost its proof): mail a code to the same address with POST …/sign_in, then send it here. ' +
      'The answer\'s participant_proof replaces the one before (that browser can no longer take the next steps). Only the address that signed in is taken (403 otherwise).',
  })
  @ApiResponse(ILLEGAL)
  @ApiOkResponse({ description: '{participant_proof}' })
  async proof(@Param('session_token') token: string, @Body() body: ProofDto): Promise<ProofReply> {
    return this.send(DECISIONS_PROOF, { session_token: await this.access.requireHomedHere(token), email: body.email, code: body.code });
  }

  @Post('sign_in')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Mail a one-time code to the person (while authenticating; once signed in, to the same address, for POST …/proof)',
    description: 'Codes have 6 digits, expire after 10 minutes and allow 5 attempts; at most 5 codes per session per hour (429).',
  })
  async signIn(@Param('session_token') token: string, @Body() body: SignInDto): Promise<SignInReply> {
    return this.send(DECISIONS_SIGN_IN, { session_token: await this.access.requireHomedHere(token), email: body.email, ...(body.locale ? { locale: body.locale } : {}) });
  }

  @Post('complete')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Decide',
    description:
      'Accepted only from reviewing (standard path) or evidenced (informed path). Returns the exchange_token (the consent token: ' +
      'single use, 5 minutes) and, in redirect mode, redirect_to: the redirect_uri as given on success, with ?error=access_denied otherwise.',
  })
  @ApiResponse(ILLEGAL)
  @ApiOkResponse({ description: '`{outcome, exchange_token, completed_at, redirect_to?}`' })
  @ApiHeader(PROOF_HEADER)
  @ApiResponse(NOT_PROVEN)
  async complete(@Param('session_token') token: string, @Body() body: CompleteDto, @Headers('x-participant-proof') proof: string | undefined): Promise<CompleteReply> {
    return this.send(DECISIONS_COMPLETE, { session_token: await this.access.requireHomedHere(token), ...body, ...proven(proof) });
  }

  @Post('cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'The person (or the host page) cancels: the session ends as expired' })
  @ApiResponse(ILLEGAL)
  @ApiOkResponse({ description: 'The participant view, now `expired`' })
  @ApiHeader(PROOF_HEADER)
  @ApiResponse(NOT_PROVEN)
  async cancel(@Param('session_token') token: string, @Body() body: CancelDto, @Headers('x-participant-proof') proof: string | undefined): Promise<ParticipantViewMessage> {
    return this.send(DECISIONS_CANCEL, {
      session_token: await this.access.requireHomedHere(token),
      reason: body.reason,
      cancelled_by: body.cancelled_by ?? 'user',
      ...proven(proof),
    });
  }

  @Post('frame_events')
  @HttpCode(204)
  @ApiOperation({
    summary: 'The embedded frame reports messages it dropped',
    description: 'Counted as trust_surface_postmessage_dropped_total{reason="origin_missing"}, at most 200 per session in all (more is answered 204 and not counted); the frame never posts to a wildcard origin.',
  })
  @ApiNoContentResponse()
  async frameEvents(@Param('session_token') token: string, @Body() body: FrameEventDto): Promise<void> {
    await this.access.requireHomedHere(token);
    const counted = this.dropBudget.take(token, body.count ?? 1);
    if (counted > 0) this.metrics.postMessageDropped.labels(body.reason).inc(counted);
  }

  /** What a session may add to the drop counter: a page drops its few messages, not thousands. */
  private readonly dropBudget = new DropBudget(DROPS_PER_SESSION);

  private async send<T>(pattern: string, payload: unknown): Promise<T> {
    const answer = await firstValueFrom(this.clients.own.send<T>(pattern, payload));
    const view = answer as unknown as ParticipantViewMessage;
    if (view && typeof view === 'object' && 'application' in view && view.application) {
      const application = this.index.application(view.application.id);
      view.application.name = application?.name ?? '';
      if ('embed_origin' in view) view.embed_origin = embedOriginNow(view, application);
    }
    return answer;
  }
}
