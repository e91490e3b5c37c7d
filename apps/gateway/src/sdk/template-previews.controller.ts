import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import { FLOWS_GET, FlowMessage, TEMPLATES_CREATE, TEMPLATES_DELETE, TEMPLATES_GET, TemplateMessage } from '@dcr/contracts';
import { countryOfTemplateId, isFlowId, isTemplateId, notFound } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { publicBaseUrl } from '../http/public-url';
import { EdgeValidationPipe } from '../http/validation.pipe';
import { ApiErrorResponses, ErrorBodyDto } from '../openapi/openapi.decorators';
import { PreviewTokens } from './preview-tokens';
import { CreateTemplateDto, PreviewTemplateDto, TemplateDto, TemplatePreviewLinkDto } from './sdk.dto';
import { audienceOf, HomeCountry } from '../residency/home-country';

/** The body of a create is optional; when sent it passes the same edge validation as any other. */
const BODY_PIPE = new EdgeValidationPipe();

function templateView(template: TemplateMessage) {
  return { id: template.id, flow_id: template.flow_id, flow_version: template.flow_version, created_at: template.created_at };
}

/**
 * Preview templates: handles on one flow version (draft or active) that the organisation's tooling
 * previews as a person would see the decision page, before or after activation, without a session and
 * without recording anything. The client script's previewTemplate asks `…/preview` for a signed,
 * ten-minute link to the flow host's preview page (`/preview/<token>`, PreviewPageController).
 * Templates are kept by the decisions service beside the flow versions, in the country whose endpoint
 * created them: their ids name that country, and another country answers 421.
 */
@ApiTags('Templates')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('api_token', 'admin')
@Controller()
export class TemplatePreviewsController {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    private readonly tokens: PreviewTokens,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/flows/:flow_id/templates')
  @RequireScopes('flows:write')
  @ApiOperation({
    summary: 'Create a preview template of a flow version',
    description:
      'A handle on one version of the flow (the newest, a pending draft included, unless `flow_version` names another) for previewTemplate. ' +
      'A flow of an application the credential cannot see is a 404; a version the flow does not have is a 422 on `flow_version`. ' +
      'The template is kept in the country whose endpoint created it.',
  })
  @ApiParam({ name: 'flow_id', example: 'flw_dev_0123456789abcdef' })
  @ApiBody({ type: CreateTemplateDto, required: false })
  @ApiCreatedResponse({ type: TemplateDto })
  async create(@CurrentPrincipal() principal: Principal, @Param('flow_id') flowId: string, @Body() body: unknown) {
    const input = (await BODY_PIPE.transform(body ?? {}, { type: 'body', metatype: CreateTemplateDto })) as CreateTemplateDto;
    const flow = await this.ownedFlow(principal, flowId);
    const template = await this.send<TemplateMessage>(TEMPLATES_CREATE, {
      application_id: flow.application_id,
      flow_id: flow.id,
      ...(input.flow_version !== undefined ? { flow_version: input.flow_version } : {}),
    });
    return templateView(template);
  }

  @Get('api/v1/templates/:template_id')
  @RequireScopes('flows:read')
  @ApiOperation({ summary: 'A preview template' })
  @ApiParam({ name: 'template_id', example: 'tpl_us0123456789abcdefghij' })
  @ApiOkResponse({ type: TemplateDto })
  @ApiResponse({ status: 421, description: 'The template is kept in another country (`home_country`)', type: ErrorBodyDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('template_id') templateId: string) {
    return templateView(await this.owned(principal, templateId));
  }

  @Delete('api/v1/templates/:template_id')
  @HttpCode(204)
  @RequireScopes('flows:write')
  @ApiOperation({ summary: 'Delete a preview template: its preview links stop working at once' })
  @ApiParam({ name: 'template_id', example: 'tpl_us0123456789abcdefghij' })
  @ApiNoContentResponse()
  @ApiResponse({ status: 421, description: 'The template is kept in another country (`home_country`)', type: ErrorBodyDto })
  async remove(@CurrentPrincipal() principal: Principal, @Param('template_id') templateId: string): Promise<void> {
    const template = await this.owned(principal, templateId);
    await this.send(TEMPLATES_DELETE, { application_id: template.application_id, id: template.id });
  }

  @Post('api/v1/templates/:template_id/preview')
  @HttpCode(200)
  @RequireScopes('flows:read')
  @ApiOperation({
    summary: 'A signed, ten-minute link to the preview page of a template (the client script’s previewTemplate)',
    description:
      'The link shows the template’s flow version as its decision page, under a "Preview – nothing is recorded" banner, with every control disabled: ' +
      'no session, no cookie, nothing recorded. `device` and `theme` are the page’s defaults; the link’s `?device=` and `?theme=` override them. ' +
      'The page may be framed by the service’s own origin only: API tokens never leave the server or the service’s own tooling pages.',
  })
  @ApiParam({ name: 'template_id', example: 'tpl_us0123456789abcdefghij' })
  @ApiOkResponse({ type: TemplatePreviewLinkDto })
  @ApiResponse({ status: 421, description: 'The template is kept in another country (`home_country`)', type: ErrorBodyDto })
  async preview(
    @CurrentPrincipal() principal: Principal,
    @Param('template_id') templateId: string,
    @Body() body: PreviewTemplateDto,
    @Req() request: FastifyRequest,
  ): Promise<TemplatePreviewLinkDto> {
    const template = await this.owned(principal, templateId);
    const { token, expiresAt } = this.tokens.sign({ template_id: template.id, device: body.device ?? 'desktop', theme: body.theme ?? 'light' });
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    return { preview_url: `${base}/preview/${token}`, expires_at: expiresAt };
  }

  /** A template of this country that the caller may see; another country's id is a 421, anything else a 404. */
  private async owned(principal: Principal, templateId: string): Promise<TemplateMessage> {
    if (!isTemplateId(templateId)) throw notFound('Template');
    await this.homeCountry.requireHere(countryOfTemplateId(templateId)!, 'template', templateId, 'Template', audienceOf(principal));
    const template = await this.send<TemplateMessage>(TEMPLATES_GET, { id: templateId });
    try {
      requireApplicationAccess(principal, this.index.application(template.application_id));
    } catch {
      throw notFound('Template');
    }
    return template;
  }

  /** A flow of an application the caller may not see is answered exactly like a missing one. */
  private async ownedFlow(principal: Principal, flowId: string): Promise<FlowMessage> {
    if (!isFlowId(flowId)) throw notFound('Flow');
    const flow = await this.send<FlowMessage>(FLOWS_GET, { flow_id: flowId });
    try {
      requireApplicationAccess(principal, this.index.application(flow.application_id));
    } catch {
      throw notFound('Flow');
    }
    return flow;
  }

  private send<T>(pattern: string, payload: unknown): Promise<T> {
    return firstValueFrom(this.clients.own.send<T>(pattern, payload));
  }
}
