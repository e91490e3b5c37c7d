import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import {
  CreateDecisionRequest,
  DECISIONS_CREATE,
  DECISIONS_EXCHANGE,
  DECISIONS_VERIFY,
  DecisionCreated,
  ExchangeReply,
  VerifyReply,
} from '@dcr/contracts';
import { DomainError, FieldIssue, originMatches, parseOrigin } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { AccountApplications } from '../auth/account-applications';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex, IndexedApplication } from '../connect/credential-index';
import { publicBaseUrl } from '../http/public-url';
import { ApiErrorResponses, ApiNotImplemented, ErrorBodyDto } from '../openapi/openapi.decorators';
import { DecisionAccess } from './decision-access';
import {
  CreateConsentSessionDto,
  CreateDecisionDto,
  DecisionCreatedDto,
  ExchangeDto,
  ExchangeResultDto,
  VerifyDto,
  VerifyQueryDto,
} from './decisions.dto';

const WRONG_COUNTRY = { status: 421, description: 'The session lives in another country: `home_country` only', type: ErrorBodyDto };
const DEPRECATED = {
  description: 'The deprecated family answers with `Deprecation`, `Sunset` (RFC 8594) and a successor `Link` on every response',
};

/**
 * The organisation's side of decisions: open a session (API token, or a publishable key from an
 * allowed origin), then learn the outcome server-side by verifying or exchanging the consent token.
 */
@ApiTags('Decisions')
@ApiErrorResponses()
@Controller()
export class DecisionsController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly access: DecisionAccess,
    private readonly accounts: AccountApplications,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/decisions')
  @AcceptCredentials('api_token', 'publishable_key')
  @RequireScopes('decisions:write')
  @ApiBearerAuth()
  @ApiSecurity('publishable_key')
  @ApiOperation({
    summary: 'Ask a person for a decision (consent or approval)',
    description:
      'Returns the dts_ session token and the URLs of the hosted pages. A consent needs an active flow; a draft flow is refused ' +
      '(422 on flow_id). The session gets the version active when it is written (409 conflict, nothing written, if the active version ' +
      'changed three times during the request). embed_origin and the origin of redirect_uri must be allowed origins of the application. A named subject ' +
      'homed in another country is answered 421 with home_country. A publishable key opens consent sessions only (403 naming kind).',
  })
  @ApiCreatedResponse({ type: DecisionCreatedDto })
  @ApiResponse(WRONG_COUNTRY)
  @ApiNotImplemented('A decision of kind `signature_request` (cross-border signing) is not built yet')
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateDecisionDto, @Req() request: FastifyRequest) {
    const { kind } = body;
    if (kind === 'signature_request') {
      throw new DomainError('not_implemented', 'Decisions of kind signature_request (cross-border signing) are not implemented yet; consent and approval are');
    }
    return this.open(principal, { ...body, kind, delivery_mode: body.delivery_mode ?? 'direct' }, 'decisions', request);
  }

  @Post('api/v1/consent_sessions')
  @AcceptCredentials('api_token', 'publishable_key')
  @RequireScopes('decisions:write')
  @ApiBearerAuth()
  @ApiSecurity('publishable_key')
  @ApiOperation({
    summary: 'Deprecated alias: open a consent session (use POST /api/v1/decisions)',
    deprecated: true,
    ...DEPRECATED,
  })
  @ApiCreatedResponse({ type: DecisionCreatedDto })
  async createConsentSession(@CurrentPrincipal() principal: Principal, @Body() body: CreateConsentSessionDto, @Req() request: FastifyRequest) {
    return this.open(principal, { ...body, kind: 'consent', delivery_mode: body.delivery_mode ?? 'embed' }, 'consent_sessions', request);
  }

  @Get(['api/v1/decisions/:session_token/verify', 'api/v1/consent_sessions/:session_token/verify'])
  @RequireScopes('decisions:read')
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Verify a consent token server-side (single use)',
    description:
      'The first check of the token of a granted decision answers {valid: true, status: fulfilled} and clears the token; a replay, ' +
      'a token older than 5 minutes or an unknown token answers {valid: false, status: expired}. Also under the deprecated ' +
      '/api/v1/consent_sessions family.',
  })
  @ApiOkResponse({ type: VerifyDto })
  @ApiResponse(WRONG_COUNTRY)
  async verify(@CurrentPrincipal() principal: Principal, @Param('session_token') token: string, @Query() query: VerifyQueryDto): Promise<VerifyReply> {
    await this.access.requireHomedHere(token);
    return this.asSessionApplication<VerifyReply>(principal, DECISIONS_VERIFY, token, { consent_token: query.consent_token });
  }

  @Post(['api/v1/decisions/:session_token/exchange', 'api/v1/consent_sessions/:session_token/exchange'])
  @HttpCode(200)
  @RequireScopes('decisions:read')
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Exchange the completion message’s exchange_token for the outcome (API token only, single use)',
    description: '410 when the token is older than 5 minutes, already used (also by verify) or unknown.',
  })
  @ApiOkResponse({ type: ExchangeResultDto })
  @ApiResponse({ status: 410, description: 'The token is spent, too old or unknown', type: ErrorBodyDto })
  @ApiResponse(WRONG_COUNTRY)
  async exchange(
    @CurrentPrincipal() principal: Principal,
    @Param('session_token') token: string,
    @Body() body: ExchangeDto,
  ): Promise<ExchangeReply> {
    await this.access.requireHomedHere(token);
    return this.asSessionApplication<ExchangeReply>(principal, DECISIONS_EXCHANGE, token, { exchange_token: body.exchange_token });
  }

  private callerApplication(principal: Principal): IndexedApplication {
    if (principal.kind === 'admin') throw new DomainError('forbidden', 'Use an API token of the application');
    return principal.application;
  }

  /**
   * Verify and exchange (`pattern`, with `payload`) act for the session's application when it is one of an API token's account
   * (AccountApplications): asked as the token's own application first, so the common case costs
   * nothing more, then, when that application has no such session (404), as the session's. A token
   * is spent only by the application that has its session, so the first try spends nothing.
   */
  private async asSessionApplication<T>(principal: Principal, pattern: string, token: string, payload: Record<string, unknown>): Promise<T> {
    const act = (applicationId: string) => firstValueFrom(this.clients.own.send<T>(pattern, { session_token: token, ...payload, application_id: applicationId }));
    const own = this.callerApplication(principal);
    try {
      return await act(own.id);
    } catch (error) {
      if (principal.kind !== 'api_token' || !(error instanceof DomainError) || error.code !== 'not_found') throw error;
      const owner = await this.accounts.applicationFor(principal, 'session', token);
      if (owner === own.id) throw error;
      return act(owner);
    }
  }

  /** A session opened without `application_id`: the flow's application, when it is one of an API token's account (AccountApplications), else the caller's. */
  private async flowApplication(principal: Principal, flowId: string | undefined): Promise<IndexedApplication> {
    const own = this.callerApplication(principal);
    if (principal.kind === 'admin' || flowId === undefined) return own;
    const applicationId = await this.accounts.applicationFor(principal, 'flow', flowId);
    return applicationId === own.id ? own : (this.index.application(applicationId) ?? own);
  }

  private async open(
    principal: Principal,
    body: Omit<CreateDecisionDto, 'delivery_mode' | 'kind'> & { kind: CreateDecisionRequest['kind']; delivery_mode: CreateDecisionRequest['delivery_mode'] },
    via: 'decisions' | 'consent_sessions',
    request: FastifyRequest,
  ) {
    const application = body.application_id
      ? requireApplicationAccess(principal, this.index.application(body.application_id))
      : await this.flowApplication(principal, body.flow_id);
    if (principal.kind === 'publishable_key' && body.application_id && body.application_id !== principal.application.id) {
      throw new DomainError('forbidden', 'A publishable key opens sessions for its own application only');
    }
    // The specification's capability of a public credential: consent sessions only. An approval's
    // title, action and amounts are the organisation's server's word, or anyone who read the key out
    // of a page could put them before any person in the organisation's name.
    if (principal.kind === 'publishable_key' && body.kind !== 'consent') {
      throw new DomainError('forbidden', 'A publishable key opens consent sessions only; open an approval with an API token from your server', [
        { field: 'kind', reason: 'must be consent with a publishable key' },
      ]);
    }
    this.checkOrigins(application, body);
    const created = await firstValueFrom(
      this.clients.own.send<DecisionCreated, CreateDecisionRequest>(DECISIONS_CREATE, {
        application_id: application.id,
        via,
        kind: body.kind,
        flow_id: body.flow_id,
        delivery_mode: body.delivery_mode,
        embed_origin: body.embed_origin,
        redirect_uri: body.redirect_uri,
        subject: body.subject,
        deadline_at: body.deadline_at,
        approval: body.approval,
        locale: body.locale,
      }),
    );
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    return {
      session_id: created.session_id,
      session_token: created.session_token,
      decision_url: `${base}/decisions/${created.session_token}`,
      embed_url: `${base}/decisions/${created.session_token}/embed`,
      kind: created.kind,
      status: created.status,
      delivery_mode: created.delivery_mode,
      flow_id: created.flow_id,
      flow_version: created.flow_version,
      expires_at: created.expires_at,
      deadline_at: created.deadline_at,
      created_at: created.created_at,
    };
  }

  /** The host page and the redirect target must be origins the application registered. */
  private checkOrigins(application: IndexedApplication, body: { delivery_mode: string; embed_origin?: string; redirect_uri?: string }) {
    const issues: FieldIssue[] = [];
    if (body.embed_origin !== undefined) {
      // Not an origin at all (a trailing slash, a path) is said as such, not as an unregistered one.
      const parsed = parseOrigin(body.embed_origin);
      if (!parsed.ok) issues.push({ field: 'embed_origin', reason: `is not an origin (scheme://host[:port]): ${parsed.reason}` });
      else if (!originMatches(body.embed_origin, application.origins, application.environment)) {
        issues.push({ field: 'embed_origin', reason: "not among the application's allowed origins" });
      }
    }
    if (body.redirect_uri !== undefined) {
      let origin: string | undefined;
      try {
        const url = new URL(body.redirect_uri);
        if (url.protocol === 'http:' || url.protocol === 'https:') origin = url.origin;
      } catch {
        origin = undefined;
      }
      if (!origin) issues.push({ field: 'redirect_uri', reason: 'must be an absolute http(s) URL' });
      else if (!originMatches(origin, application.origins, application.environment)) {
        issues.push({ field: 'redirect_uri', reason: "its origin is not among the application's allowed origins" });
      }
    }
    if (body.delivery_mode === 'redirect' && body.redirect_uri === undefined) {
      issues.push({ field: 'redirect_uri', reason: 'required for delivery_mode redirect' });
    }
    if (issues.length > 0) throw new DomainError('validation_failed', 'The request did not pass validation', issues);
  }
}
