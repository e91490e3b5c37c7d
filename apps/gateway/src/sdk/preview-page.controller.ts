import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FLOWS_GET, FlowMessage, TEMPLATES_GET, TemplateMessage } from '@dcr/contracts';
import { DomainError, FlowTerms, participantFlow, PREVIEW_DEVICES, PREVIEW_THEMES, PreviewDevice, PreviewTheme, VerifiedPreviewToken } from '@dcr/domain';
import { contentSecurityPolicy, renderDecisionPreviewPage, renderPreviewErrorPage } from '@dcr/hosted-pages';
import { ServiceClients } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { CredentialIndex } from '../connect/credential-index';
import { PreviewTokens } from './preview-tokens';

class PreviewRefusal extends Error {
  constructor(
    readonly status: 400 | 404 | 410,
    message?: string,
  ) {
    super(message ?? `preview refused (${status})`);
  }
}

function choice<T extends string>(values: readonly T[], value: string | undefined, fallback: T, name: string): T {
  if (value === undefined) return fallback;
  if (!values.includes(value as T)) throw new PreviewRefusal(400, `${name}: must be ${values.join(' or ')}`);
  return value as T;
}

/**
 * The preview page of a preview template, on the flow host: the flow version's decision page as a
 * person sees it, rendered by the hosted pages in preview mode. The signed link is its only
 * credential. No session, no cookie, nothing recorded: the page loads no script, its controls are
 * disabled and its CSP closes `connect-src` and `form-action`. Only the service's own origin may frame
 * it (`frame-ancestors 'self'`): previewTemplate runs there, because an API token is never sent from
 * another origin.
 */
@ApiTags('Templates')
@PublicRoute()
@Controller()
export class PreviewPageController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly tokens: PreviewTokens,
  ) {}

  @Get('preview/:token')
  @ApiOperation({
    summary: 'The preview page of a preview template (the preview_url of POST /api/v1/templates/{template_id}/preview)',
    description:
      'HTML: the template’s flow version as its decision page (the decision step), under a "Preview – nothing is recorded" banner, every control ' +
      'disabled, no script, no session, no cookie. `Content-Security-Policy` as the hosted pages with `connect-src \'none\'`, `form-action \'none\'` ' +
      'and `frame-ancestors \'self\'`. An expired link is a 410 page, a forged one or a deleted template a 404 page.',
  })
  @ApiParam({ name: 'token', description: 'The signed preview token (valid 10 minutes)' })
  @ApiQuery({ name: 'device', required: false, enum: PREVIEW_DEVICES, description: 'Layout width: a phone (390 px) or the full width; default: as asked when the link was made' })
  @ApiQuery({ name: 'theme', required: false, enum: PREVIEW_THEMES, description: 'Colour scheme; default: as asked when the link was made' })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'The preview page' })
  @ApiResponse({ status: 400, description: 'A bad device or theme (an HTML page naming it)' })
  @ApiResponse({ status: 404, description: 'A forged or altered link, or the template was deleted (an HTML page)' })
  @ApiResponse({ status: 410, description: 'The link has expired (an HTML page)' })
  async page(
    @Param('token') token: string,
    @Query('device') device: string | undefined,
    @Query('theme') theme: string | undefined,
    @Headers('accept-language') language: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    try {
      const link = this.verify(token);
      const presentation = {
        device: choice<PreviewDevice>(PREVIEW_DEVICES, device, link.device, 'device'),
        theme: choice<PreviewTheme>(PREVIEW_THEMES, theme, link.theme, 'theme'),
      };
      // The template names the application and the flow version; a deleted template ends its links.
      const template = await this.lookUp<TemplateMessage>(TEMPLATES_GET, { id: link.template_id });
      const application = this.index.application(template.application_id);
      if (!application) throw new PreviewRefusal(404);
      const flow = await this.lookUp<FlowMessage>(FLOWS_GET, { flow_id: template.flow_id, version: template.flow_version });
      const body = renderDecisionPreviewPage(
        { application: { id: application.id, name: application.name }, flow: participantFlow(flow, flow.terms as unknown as FlowTerms) },
        { ...presentation, locale: language },
      );
      return this.html(reply, 200, body);
    } catch (error) {
      if (!(error instanceof PreviewRefusal)) throw error;
      const message = error.status === 400 ? error.message : undefined;
      return this.html(reply, error.status, renderPreviewErrorPage({ status: error.status, locale: language, message }));
    }
  }

  private verify(token: string): VerifiedPreviewToken {
    try {
      return this.tokens.verify(token);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'gone') throw new PreviewRefusal(410);
      if (error instanceof DomainError && error.code === 'not_found') throw new PreviewRefusal(404);
      throw error;
    }
  }

  private async lookUp<T>(pattern: string, payload: unknown): Promise<T> {
    try {
      return await firstValueFrom(this.clients.own.send<T>(pattern, payload));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') throw new PreviewRefusal(404);
      throw error;
    }
  }

  /** Framed by the service's own origin only; never cached, never a cookie, nothing it could send. */
  private html(reply: FastifyReply, status: number, body: string) {
    return reply
      .status(status)
      .header('content-security-policy', contentSecurityPolicy({ frameAncestors: ["'self'"], sendsNothing: true }))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(body);
  }
}
