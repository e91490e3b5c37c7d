import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import {
  FLOWS_ACTIVATE,
  FLOWS_CREATE,
  FLOWS_GET,
  FLOWS_LIST,
  FLOWS_NEW_VERSION,
  FLOWS_UPDATE,
  FlowMessage,
  FlowPage,
} from '@dcr/contracts';
import { DomainError, isFlowId, notFound, parseLimit } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal, requireApplicationAccess } from '../auth/principal';
import { CredentialIndex } from '../connect/credential-index';
import { ListQueryDto } from '../connect/connect.dto';
import { bodyNotAnObject } from '../http/error-responder';
import { publicBaseUrl } from '../http/public-url';
import { repeatedQueryParameter } from '../http/query-parameters';
import { ApiConflict, ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { FlowDto, FlowTermsDto, PurposeDefinitionDto, PurposeDto } from './flows.dto';
import { flowView } from './flow-view';

function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw bodyNotAnObject();
  }
  return body as Record<string, unknown>;
}

/**
 * Flows: authored once, readable at every country's endpoint (configuration, not personal data).
 * Drafts change; activation freezes the terms; a new version supersedes for new decisions.
 */
@ApiTags('Flows')
@ApiExtraModels(PurposeDefinitionDto, PurposeDto)
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('api_token', 'admin')
@Controller()
export class FlowsController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly index: CredentialIndex,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/applications/:application_id/flows')
  @RequireScopes('flows:write')
  @ApiOperation({ summary: 'Create a flow (a draft, version 1)' })
  @ApiBody({ type: FlowTermsDto })
  @ApiCreatedResponse({ type: FlowDto })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
  ) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const flow = await this.send<FlowMessage>(FLOWS_CREATE, { application_id: applicationId, terms: bodyObject(body) });
    return flowView(flow, this.baseUrl(request));
  }

  @Get('api/v1/applications/:application_id/flows')
  @RequireScopes('flows:read')
  @ApiOperation({ summary: "The application's flows, newest first, each at its newest version" })
  @ApiPage(FlowDto)
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Query() query: ListQueryDto,
    @Req() request: FastifyRequest,
  ) {
    requireApplicationAccess(principal, this.index.application(applicationId));
    const page = await this.send<FlowPage>(FLOWS_LIST, {
      application_id: applicationId,
      limit: parseLimit(query.limit),
      cursor: query.cursor || undefined,
    });
    const base = this.baseUrl(request);
    return { data: page.data.map((flow) => flowView(flow, base)), next_cursor: page.next_cursor };
  }

  @Get('api/v1/flows/:flow_id')
  @RequireScopes('flows:read')
  @ApiOperation({ summary: 'A flow at its newest version, or at ?version=' })
  @ApiQuery({ name: 'version', required: false, type: Number })
  @ApiOkResponse({ type: FlowDto })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('flow_id') flowId: string,
    @Query('version') version: string | undefined,
    @Req() request: FastifyRequest,
  ) {
    let wanted: number | undefined;
    // Fastify hands a repeated parameter over as a list, whatever the declared type.
    if (Array.isArray(version)) throw new DomainError('invalid_request', 'Invalid query parameters', [repeatedQueryParameter('version')]);
    if (version !== undefined) {
      wanted = Number(version);
      if (!/^[1-9]\d{0,8}$/.test(version)) {
        throw new DomainError('invalid_request', 'Invalid query parameters', [{ field: 'version', reason: 'must be a positive integer' }]);
      }
    }
    const flow = await this.owned(principal, flowId, wanted);
    return flowView(flow, this.baseUrl(request));
  }

  @Patch('api/v1/flows/:flow_id')
  @RequireScopes('flows:write')
  @ApiOperation({ summary: 'Change a draft (the fields given); an active flow answers 409: publish a new version' })
  @ApiBody({ type: FlowTermsDto })
  @ApiOkResponse({ type: FlowDto })
  @ApiConflict('The version is active (its terms never change: publish a new version)')
  async update(@CurrentPrincipal() principal: Principal, @Param('flow_id') flowId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const changes = bodyObject(body);
    await this.owned(principal, flowId);
    const flow = await this.send<FlowMessage>(FLOWS_UPDATE, { flow_id: flowId, changes });
    return flowView(flow, this.baseUrl(request));
  }

  @Post('api/v1/flows/:flow_id/activate')
  @HttpCode(200)
  @RequireScopes('flows:write')
  @ApiOperation({
    summary: 'Activate the newest draft; fires flow.activated',
    description: 'Its terms never change afterwards. The previously active version is superseded but keeps governing what it collected. Activating an active flow again changes nothing.',
  })
  @ApiOkResponse({ type: FlowDto })
  async activate(@CurrentPrincipal() principal: Principal, @Param('flow_id') flowId: string, @Req() request: FastifyRequest) {
    await this.owned(principal, flowId);
    const flow = await this.send<FlowMessage>(FLOWS_ACTIVATE, { flow_id: flowId });
    return flowView(flow, this.baseUrl(request));
  }

  @Post('api/v1/flows/:flow_id/versions')
  @RequireScopes('flows:write')
  @ApiOperation({
    summary: 'Publish a new version: a draft with changed terms (the fields given, merged onto the newest version)',
    description: 'Same flow id, version + 1. 409 while the newest version is still a draft, or when nothing changed.',
  })
  @ApiBody({ type: FlowTermsDto })
  @ApiCreatedResponse({ type: FlowDto })
  @ApiConflict('A draft version is pending (change or activate it first), or the terms are the same as the newest version')
  async newVersion(@CurrentPrincipal() principal: Principal, @Param('flow_id') flowId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const changes = bodyObject(body);
    await this.owned(principal, flowId);
    const flow = await this.send<FlowMessage>(FLOWS_NEW_VERSION, { flow_id: flowId, changes });
    return flowView(flow, this.baseUrl(request));
  }

  /** A flow of an application the caller may not see is answered exactly like a missing one. */
  private async owned(principal: Principal, flowId: string, version?: number): Promise<FlowMessage> {
    if (!isFlowId(flowId)) throw notFound('Flow');
    const flow = await this.send<FlowMessage>(FLOWS_GET, { flow_id: flowId, version });
    const application = this.index.application(flow.application_id);
    try {
      requireApplicationAccess(principal, application);
    } catch {
      throw notFound('Flow');
    }
    return flow;
  }

  private send<T>(pattern: string, payload: unknown): Promise<T> {
    return firstValueFrom(this.clients.own.send<T>(pattern, payload));
  }

  private baseUrl(request: FastifyRequest): string {
    return publicBaseUrl(this.context.env as GatewayEnvironment, request);
  }
}
