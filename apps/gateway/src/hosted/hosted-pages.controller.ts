import { Controller, Get, Headers, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { SCHEMA_NAMES, schemaPath } from '@dcr/frame-protocol';
import { GatewayEnvironment } from '@dcr/config';
import { CreateDecisionRequest, DECISIONS_CREATE, DECISIONS_VIEW, DecisionCreated, FLOWS_GET, FlowMessage, ParticipantViewMessage } from '@dcr/contracts';
import { DomainError, isFlowId, originMatches } from '@dcr/domain';
import {
  ASSET_CONTENT_TYPES,
  AssetFile,
  ASSET_FILES,
  DEFAULT_ASSET_BASE,
  ParticipantView,
  readAsset,
  renderDecisionPage,
  renderErrorPage,
  renderFlowOpenPage,
  renderFlowUnavailablePage,
} from '@dcr/hosted-pages';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { CredentialIndex } from '../connect/credential-index';
import { DecisionAccess } from '../decisions/decision-access';
import { embedOriginFromReferer, embedOriginNow } from '../decisions/embed-origin';
import { publicBaseUrl } from '../http/public-url';
import { sendPage } from './page-answer';

/** The frame protocol's schemas, byte for byte, for hosts that validate what the frame posts. */
const FRAME_SCHEMAS = new Map<string, Buffer>(SCHEMA_NAMES.map((name) => [`${name}.json`, readFileSync(schemaPath(name))]));

const ASSETS = new Map<string, { body: Buffer; type: string }>(
  ASSET_FILES.map((file) => [file, { body: readAsset(file), type: ASSET_CONTENT_TYPES[file as AssetFile] }]),
);

/** A sandbox's `http://localhost` or `http://127.0.0.1` stands for any port, as in origin checks. */
function frameSource(origin: string, environment: 'sandbox' | 'production'): string {
  return environment === 'sandbox' && /^http:\/\/(localhost|127\.0\.0\.1)$/.test(origin) ? `${origin}:*` : origin;
}

/**
 * The hosted pages: server-rendered HTML over the participant API, with their own script and
 * stylesheet only (no third-party asset), a strict CSP, and `frame-ancestors` limited to the
 * session's embed origin (or the application's allowed origins) for the embed variant.
 */
@ApiExcludeController()
@PublicRoute()
@Controller()
export class HostedPagesController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly access: DecisionAccess,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get('decisions/:session_token')
  page(@Param('session_token') token: string, @Headers('accept-language') language: string | undefined, @Res() reply: FastifyReply) {
    return this.decision(token, 'page', language, reply);
  }

  @Get('decisions/:session_token/embed')
  embed(
    @Param('session_token') token: string,
    @Headers('accept-language') language: string | undefined,
    @Headers('referer') referer: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    return this.decision(token, 'embed', language, reply, referer);
  }

  /**
   * The hosted flow page of an active flow. A GET opens nothing (link scanners and prefetches follow
   * links): it answers a page whose form POSTs here, sent at once by the page's script.
   */
  @Get('accord/:flow_id')
  async accord(
    @Param('flow_id') flowId: string,
    @Query('redirect_uri') redirectUri: string | undefined,
    @Headers('accept-language') language: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const flow = await this.openableFlow(flowId, redirectUri, language, reply);
    if (!flow) return reply;
    const query = redirectUri !== undefined ? `?redirect_uri=${encodeURIComponent(redirectUri)}` : '';
    return this.html(reply, 200, renderFlowOpenPage(language, { action: `/accord/${flowId}${query}` }));
  }

  /** Opens a session of an active flow and sends the person to it: a 303 to the decision page. */
  @Post('accord/:flow_id')
  async openAccord(
    @Param('flow_id') flowId: string,
    @Query('redirect_uri') redirectUri: string | undefined,
    @Headers('accept-language') language: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const flow = await this.openableFlow(flowId, redirectUri, language, reply);
    if (!flow) return reply;
    const created = await firstValueFrom(
      this.clients.own.send<DecisionCreated, CreateDecisionRequest>(DECISIONS_CREATE, {
        application_id: flow.application_id,
        via: 'decisions',
        kind: 'consent',
        flow_id: flowId,
        delivery_mode: redirectUri ? 'redirect' : 'direct',
        redirect_uri: redirectUri,
      }),
    );
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    return reply.status(303).header('cache-control', 'no-store').redirect(`${base}/decisions/${created.session_token}`, 303);
  }

  /** The active flow a hosted flow page may open, or undefined once its error page is answered. */
  private async openableFlow(flowId: string, redirectUri: string | undefined, language: string | undefined, reply: FastifyReply): Promise<FlowMessage | undefined> {
    if (!isFlowId(flowId)) {
      // The retired /accord/<id> family: anything that is not a flow id.
      this.html(reply, 410, renderErrorPage({ status: 410, locale: language }));
      return undefined;
    }
    let flow: FlowMessage;
    try {
      flow = await firstValueFrom(this.clients.own.send<FlowMessage>(FLOWS_GET, { flow_id: flowId, active: true }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') {
        this.html(reply, 404, renderFlowUnavailablePage(language));
        return undefined;
      }
      throw error;
    }
    const application = this.index.application(flow.application_id);
    if (!application) {
      this.html(reply, 404, renderFlowUnavailablePage(language));
      return undefined;
    }
    if (redirectUri !== undefined) {
      let origin: string | undefined;
      try {
        origin = new URL(redirectUri).origin;
      } catch {
        origin = undefined;
      }
      if (!origin || !originMatches(origin, application.origins, application.environment)) {
        this.html(reply, 400, renderErrorPage({ status: 400, locale: language, message: 'redirect_uri is not an allowed origin of this application' }));
        return undefined;
      }
    }
    return flow;
  }

  @Get('assets/hosted/v1/:file')
  asset(@Param('file') file: string, @Res() reply: FastifyReply) {
    const asset = ASSETS.get(file);
    if (!asset) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
    return reply
      .status(200)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(asset.type)
      .send(asset.body);
  }

  @Get(['schemas/frame/v2/:name', 'schemas/frame/v2/:kind/:name'])
  frameSchema(@Param('kind') kind: string | undefined, @Param('name') name: string, @Res() reply: FastifyReply) {
    const body = FRAME_SCHEMAS.get(kind ? `${kind}/${name}` : name);
    if (!body) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
    return reply
      .status(200)
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=86400')
      .type('application/schema+json')
      .send(body);
  }

  private async decision(token: string, mode: 'page' | 'embed', language: string | undefined, reply: FastifyReply, referer?: string) {
    let view: ParticipantViewMessage;
    try {
      await this.access.requireHomedHere(token);
      view = await firstValueFrom(this.clients.own.send<ParticipantViewMessage>(DECISIONS_VIEW, { session_token: token }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'wrong_country') {
        const home = String(error.extra?.home_country ?? '');
        return this.html(reply, 421, renderErrorPage({ status: 421, locale: language, homeCountry: home, mode }));
      }
      if (error instanceof DomainError && error.code === 'not_found') {
        return this.html(reply, 404, renderErrorPage({ status: 404, locale: language, mode }));
      }
      throw error;
    }
    const application = this.index.application(view.application.id);
    view.application.name = application?.name ?? '';
    // The session's embed origin while the application still allows it (embedOriginNow); a session
    // made without one talks to the page that frames it when that page is one of the application's
    // allowed origins (embedOriginFromReferer).
    view.embed_origin = embedOriginNow(view, application) ?? (mode === 'embed' && !view.embed_origin ? embedOriginFromReferer(referer, application) : null);
    // Who may frame the embed page: the session's embed origin, else the application's allowed origins.
    const ancestors =
      mode === 'embed' ? (view.embed_origin ? [view.embed_origin] : (application?.origins ?? []).map((o) => frameSource(o, application!.environment))) : [];
    const body = renderDecisionPage(view as unknown as ParticipantView, { mode, assetBase: DEFAULT_ASSET_BASE, apiBase: '', locale: language });
    return this.html(reply, 200, body, ancestors);
  }

  private html(reply: FastifyReply, status: number, body: string, frameAncestors: string[] = []) {
    return sendPage(reply, status, body, frameAncestors);
  }
}
