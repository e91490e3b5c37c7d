import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import {
  FORM_CONNECTIONS_CREATE,
  FORM_CONNECTIONS_DELETE,
  FORM_CONNECTIONS_GET,
  FORM_CONNECTIONS_LIST,
  FORM_CONNECTIONS_ROTATE_SECRET,
  FORM_CONNECTIONS_UPDATE_MAPPING,
  FormConnectionMessage,
  FormConnectionWithSecretMessage,
  ListPart,
} from '@dcr/contracts';
import { countryOfFormConnectionId, isFormConnectionId, notFound, Page } from '@dcr/domain';
import { everyPart, SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { actorOfPrincipal } from '../connect/configuration-audit';
import { ListQueryDto } from '../connect/connect.dto';
import { CredentialIndex } from '../connect/credential-index';
import { pageOf } from '../http/paging';
import { publicBaseUrl } from '../http/public-url';
import { ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import {
  CreateFormConnectionDto,
  FormConnectionDto,
  FormConnectionWithSecretDto,
  FormPurposeMappingDto,
  UpdateFormMappingDto,
} from './form-connections.dto';
import { audienceOf, HomeCountry } from '../residency/home-country';

/**
 * Connections of an application to a hosted form builder's form (Typeform): the webhook URL and
 * secret we issue, an optional personal access token, and the mapping of the form's questions to the
 * flow's purposes. A connection lives in the country whose endpoint created it; its id names that
 * country, and another country answers 421.
 */
@ApiTags('Form connections')
@ApiBearerAuth()
@ApiErrorResponses()
@ApiExtraModels(FormPurposeMappingDto)
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/applications/:application_id/form_connections')
export class FormConnectionsController {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  private call<T>(pattern: string, body: object): Promise<T> {
    return firstValueFrom(this.clients.own.send<T>(pattern, body));
  }

  /** A well-formed id of this country; another country's is a 421 naming it when it exists there (for this caller), anything else a 404. */
  private async connectionId(id: string, principal: Principal): Promise<string> {
    if (!isFormConnectionId(id)) throw notFound('Form connection');
    await this.homeCountry.requireHere(countryOfFormConnectionId(id)!, 'form_connection', id, 'Form connection', audienceOf(principal));
    return id;
  }

  private view<T extends FormConnectionMessage>(request: FastifyRequest, message: T): T & { webhook_url: string } {
    const base = publicBaseUrl(this.context.env as GatewayEnvironment, request);
    const { id, platform, form_id, flow_id, ...rest } = message;
    return { id, platform, form_id, flow_id, webhook_url: `${base}/hooks/${platform}/${id}`, ...rest } as T & { webhook_url: string };
  }

  @Post()
  @RequireScopes('applications:write')
  @ApiOperation({
    summary: 'Connect a Typeform form to a flow; the webhook secret is in this answer only',
    description:
      'The mapping is checked against the form (from `form_definition`, else fetched from Typeform with `personal_access_token`) ' +
      'and the flow\'s active version; every refusal is a 422 naming the field. Set `webhook_url` and `secret` on the form\'s ' +
      'webhook in Typeform (Connect → Webhooks). See docs/form-builders.md.',
  })
  @ApiCreatedResponse({ type: FormConnectionWithSecretDto })
  async create(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Body() body: CreateFormConnectionDto, @Req() request: FastifyRequest) {
    const application = requireApplicationAccess(principal, this.index.application(applicationId));
    const created = await this.call<FormConnectionWithSecretMessage>(FORM_CONNECTIONS_CREATE, {
      application_id: application.id,
      platform: body.platform,
      form_id: body.form_id,
      flow_id: body.flow_id,
      ...(body.personal_access_token !== undefined ? { personal_access_token: body.personal_access_token } : {}),
      mapping: JSON.parse(JSON.stringify(body.mapping)),
      ...(body.form_definition !== undefined ? { form_definition: body.form_definition } : {}),
      actor: actorOfPrincipal(principal),
    });
    return this.view(request, created);
  }

  @Get()
  @RequireScopes('applications:read')
  @ApiOperation({ summary: "The application's form connections kept in this country (never a secret or token)" })
  @ApiPage(FormConnectionDto)
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Query() query: ListQueryDto,
    @Req() request: FastifyRequest,
  ): Promise<Page<FormConnectionMessage & { webhook_url: string }>> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const all = await everyPart((after) => this.call<ListPart<FormConnectionMessage>>(FORM_CONNECTIONS_LIST, { application_id: applicationId, ...(after ? { after } : {}) }));
    return pageOf(all.map((item) => this.view(request, item)), (item) => [item.created_at, item.id], query, `form_connections:${applicationId}`);
  }

  @Get(':connection_id')
  @RequireScopes('applications:read')
  @ApiOkResponse({ type: FormConnectionDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('connection_id') id: string, @Req() request: FastifyRequest) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    return this.view(request, await this.call<FormConnectionMessage>(FORM_CONNECTIONS_GET, { application_id: applicationId, id: await this.connectionId(id, principal) }));
  }

  @Put(':connection_id/mapping')
  @RequireScopes('applications:write')
  @ApiOperation({
    summary: 'Replace the field mapping; it is checked again against the form and the flow',
    description: 'The form is read from `form_definition`, else fetched with the kept personal access token, else the definition kept from the last save.',
  })
  @ApiOkResponse({ type: FormConnectionDto })
  async updateMapping(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('connection_id') id: string,
    @Body() body: UpdateFormMappingDto,
    @Req() request: FastifyRequest,
  ) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const updated = await this.call<FormConnectionMessage>(FORM_CONNECTIONS_UPDATE_MAPPING, {
      application_id: applicationId,
      id: await this.connectionId(id, principal),
      mapping: JSON.parse(JSON.stringify(body.mapping)),
      ...(body.form_definition !== undefined ? { form_definition: body.form_definition } : {}),
      actor: actorOfPrincipal(principal),
    });
    return this.view(request, updated);
  }

  @Post(':connection_id/rotate_secret')
  @HttpCode(200)
  @RequireScopes('applications:write')
  @ApiOperation({
    summary: 'Replace the webhook secret; the new one is in this answer only, the previous one is honoured for one more day',
  })
  @ApiOkResponse({ type: FormConnectionWithSecretDto })
  async rotate(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('connection_id') id: string, @Req() request: FastifyRequest) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const rotated = await this.call<FormConnectionWithSecretMessage>(FORM_CONNECTIONS_ROTATE_SECRET, {
      application_id: applicationId,
      id: await this.connectionId(id, principal),
      actor: actorOfPrincipal(principal),
    });
    return this.view(request, rotated);
  }

  @Delete(':connection_id')
  @HttpCode(204)
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Delete a connection: its webhook URL answers 404 from now on; records already made stay' })
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Param('connection_id') id: string): Promise<void> {
    requireApplicationAccess(principal, this.index.application(applicationId));
    await this.call(FORM_CONNECTIONS_DELETE, { application_id: applicationId, id: await this.connectionId(id, principal), actor: actorOfPrincipal(principal) });
  }
}
