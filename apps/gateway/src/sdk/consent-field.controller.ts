import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FLOWS_GET, FlowMessage } from '@dcr/contracts';
import { DomainError, fieldControlOf, FlowTerms, isFlowId, originMatches, parseOrigin, selectFieldPurposes } from '@dcr/domain';
import { ConsentFieldTheme, contentSecurityPolicy, renderConsentFieldErrorPage, renderConsentFieldPage, resolveLocale } from '@dcr/hosted-pages';
import { noticeContentOf, privacyNotice } from '@dcr/receipts';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { CredentialIndex } from '../connect/credential-index';
import { ClientScripts, ENTRY_POINTS } from './client-scripts';
import { RenderProofs } from './render-proofs';

/** The frame's script, served with the client scripts (libs/client-sdk). */
const FRAME_SCRIPT = 'service-field-frame.js';
const FRAME_SCRIPT_PATH = ENTRY_POINTS['service-field.js'].replace('service-field.js', FRAME_SCRIPT);
const SERVICE_NAME = 'Decision, Consent and Receipt Service';
const THEMES: readonly ConsentFieldTheme[] = ['light', 'dark', 'auto'];
const LOCALE_TAG = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/;

class FieldRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The host origin, once verified: the error is then shown in its frame and posted to the element. */
    readonly hostOrigin: string | null = null,
  ) {
    super(message);
  }
}

const HTML_ERROR = { description: 'An HTML error page naming the problem (shown in the frame, and posted to the element as `service:error` once the origin is verified)' };

/**
 * The consent field: the page the `service-consent-field` element frames in an organisation's form,
 * rendered for the flow's active version with a render proof that only the frame knows. It may be
 * framed only by the host origin it was rendered for, which must be an allowed origin of the
 * application; it sets no cookie.
 */
@ApiTags('Consent field')
@PublicRoute()
@Controller()
export class ConsentFieldController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly scripts: ClientScripts,
    private readonly proofs: RenderProofs,
  ) {}

  @Get('field/v1/:flow_id')
  @ApiOperation({
    summary: 'The consent field (framed by the service-consent-field element)',
    description:
      'HTML for an iframe: every purpose of the active flow version that takes a decision as a checkbox (consent unticked, a right to object ticked ' +
      'with the objection wording), notice-only purposes as text, no control for a required item, the recorded-by mark. The page carries a signed ' +
      'render proof (HS256 JWS, valid one hour, single use) that authenticates the frame\'s own `embedded_field` capture in place of the publishable ' +
      'key. `Content-Security-Policy: frame-ancestors <origin>`; no cookie. The appearance is never part of this request: the element sends it to the frame.',
  })
  @ApiParam({ name: 'flow_id', example: 'flw_dev_0123456789abcdef' })
  @ApiQuery({ name: 'origin', required: true, description: "The host page's origin (scheme://host[:port]); an allowed origin of the flow's application" })
  @ApiQuery({ name: 'locale', required: false, description: 'Language of the field (en, de; others fall back to the Accept-Language, the flow\'s locale, then English)' })
  @ApiQuery({ name: 'purposes', required: false, description: 'A comma-separated subset of the flow\'s purpose keys; every consent purpose must be in it' })
  @ApiQuery({ name: 'theme', required: false, enum: THEMES })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'The field page', headers: { 'Content-Security-Policy': { description: "`frame-ancestors` is the host origin", schema: { type: 'string' } } } })
  @ApiResponse({ status: 400, ...HTML_ERROR })
  @ApiResponse({ status: 403, description: 'The origin is not an allowed origin of the application, or the application has none (the field needs at least one)' })
  @ApiResponse({ status: 404, description: 'No active flow with this id' })
  @ApiResponse({ status: 422, description: 'The flow cannot be captured in a form (it needs the hosted experience)' })
  @ApiResponse({ status: 503, description: 'The client scripts are not built on this gateway (development only)' })
  async page(
    @Param('flow_id') flowId: string,
    @Query('origin') origin: string | undefined,
    @Query('locale') locale: string | undefined,
    @Query('purposes') purposes: string | undefined,
    @Query('theme') theme: string | undefined,
    @Headers('accept-language') acceptLanguage: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const language = resolveLocale(typeof locale === 'string' && LOCALE_TAG.test(locale) ? locale : undefined, acceptLanguage).language;
    try {
      return await this.render(flowId, { origin, locale, purposes, theme, acceptLanguage }, reply);
    } catch (error) {
      if (!(error instanceof FieldRefusal)) throw error;
      const script = error.hostOrigin ? this.frameScript() : null;
      const body = renderConsentFieldErrorPage({
        message: error.message,
        locale: language,
        script,
        config: script ? { host_origin: error.hostOrigin, error: { code: error.code, message: error.message } } : null,
      });
      return this.html(reply, error.status, body, error.hostOrigin);
    }
  }

  private async render(
    flowId: string,
    query: { origin?: string; locale?: string; purposes?: string; theme?: string; acceptLanguage?: string },
    reply: FastifyReply,
  ) {
    if (!isFlowId(flowId)) throw new FieldRefusal(404, 'not_found', `${String(flowId).slice(0, 60)} is not a flow id`);
    let flow: FlowMessage;
    try {
      flow = await firstValueFrom(this.clients.own.send<FlowMessage>(FLOWS_GET, { flow_id: flowId, active: true }));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') throw new FieldRefusal(404, 'not_found', `No active flow ${flowId}`);
      throw error;
    }
    const application = this.index.application(flow.application_id);
    if (!application) throw new FieldRefusal(404, 'not_found', `No active flow ${flowId}`);

    // A parameter given twice reaches here as a list (`?purposes=a&purposes=b`).
    const repeated = (name: string) => `${name}: give it once${name === 'purposes' ? ', comma-separated' : ''}`;
    if (Array.isArray(query.origin)) throw new FieldRefusal(400, 'invalid_request', repeated('origin'));
    if (typeof query.origin !== 'string' || query.origin === '') {
      throw new FieldRefusal(400, 'invalid_request', "origin: the host page's origin is required (the element sends it)");
    }
    const parsed = parseOrigin(query.origin);
    if (!parsed.ok || parsed.origin !== query.origin) {
      throw new FieldRefusal(400, 'invalid_request', `origin: must be an origin, scheme://host[:port] (${parsed.ok ? 'not normalised' : parsed.reason})`);
    }
    if (application.origins.length === 0) {
      throw new FieldRefusal(403, 'origin_not_allowed', `The application ${application.id} has no allowed origin: the consent field needs at least one (POST /api/v1/applications/${application.id}/allowed_origins)`);
    }
    if (!originMatches(parsed.origin, application.origins, application.environment)) {
      throw new FieldRefusal(403, 'origin_not_allowed', `origin: ${parsed.origin} is not an allowed origin of the application ${application.id}`);
    }
    const hostOrigin = parsed.origin;
    // From here on the host is trusted: refusals are shown in its frame and posted to the element.
    const refuse = (status: number, code: string, message: string) => new FieldRefusal(status, code, message, hostOrigin);
    for (const name of ['purposes', 'locale', 'theme'] as const) {
      if (Array.isArray(query[name])) throw refuse(400, 'invalid_request', repeated(name));
    }

    if (query.locale !== undefined && !LOCALE_TAG.test(query.locale)) throw refuse(400, 'invalid_request', 'locale: must be a language tag such as en or de-DE');
    const theme = (query.theme ?? 'auto') as ConsentFieldTheme;
    if (!THEMES.includes(theme)) throw refuse(400, 'invalid_request', 'theme: must be light, dark or auto');
    const terms = flow.terms as unknown as FlowTerms;
    if (!flow.capturable) {
      throw refuse(422, 'validation_failed', `flow_id: ${flowId} cannot be captured in a form: ${flow.capturable_reasons.join('; ')}`);
    }
    let rendered: ReturnType<typeof selectFieldPurposes>;
    try {
      rendered = selectFieldPurposes(terms, query.purposes === undefined ? undefined : query.purposes.split(',').map((key) => key.trim()).filter(Boolean));
    } catch (error) {
      if (error instanceof DomainError && error.details) throw refuse(400, 'invalid_request', error.details.map((issue) => `${issue.field}: ${issue.reason}`).join('; '));
      throw error;
    }

    const language = resolveLocale(query.locale, query.acceptLanguage, terms.locale).language;
    const controls = Object.fromEntries(rendered.map((purpose) => [purpose.key, fieldControlOf(purpose)]));
    const noticeVersion = privacyNotice({ flowId: flow.id, ...noticeContentOf(terms, { presented: rendered.map((purpose) => purpose.key) }) }).reference;
    const script = this.frameScript();
    const { proof, renderedAt } = await this.proofs.sign({
      application_id: application.id,
      flow_id: flow.id,
      flow_version: flow.version,
      rendered: controls,
      notice_version: noticeVersion,
      locale: language,
      host_origin: hostOrigin,
    });
    const body = renderConsentFieldPage(
      {
        application: { name: application.name },
        flow: { id: flow.id, version: flow.version, locale: terms.locale, policy_url: terms.policy_url },
        purposes: rendered.map((purpose) => ({ key: purpose.key, label: purpose.label, description: purpose.description, basis: purpose.basis, control: controls[purpose.key] })),
      },
      {
        locale: language,
        theme,
        script,
        serviceName: SERVICE_NAME,
        config: {
          host_origin: hostOrigin,
          flow_id: flow.id,
          flow_version: flow.version,
          locale: language,
          controls: Object.fromEntries(Object.entries(controls).filter(([, control]) => control !== 'notice')),
          notice_version: noticeVersion,
          rendered_at: renderedAt,
          proof,
        },
      },
    );
    return this.html(reply, 200, body, hostOrigin);
  }

  private frameScript() {
    return { url: FRAME_SCRIPT_PATH, integrity: this.scripts.get(FRAME_SCRIPT).integrity };
  }

  /** Framed only by the host origin it was rendered for; never cached, never a cookie. */
  private html(reply: FastifyReply, status: number, body: string, hostOrigin: string | null) {
    return reply
      .status(status)
      .header('content-security-policy', contentSecurityPolicy({ frameAncestors: hostOrigin ? [hostOrigin] : [] }))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(body);
  }
}
