import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { ApplicationsService } from './applications.service';
import { ApplicationDto, CreateApplicationDto, ListQueryDto, UpdateApplicationSettingsDto } from './connect.dto';

@ApiTags('Connect: applications')
@ApiBearerAuth()
@ApiErrorResponses()
@Controller('api/v1/applications')
export class ApplicationsController {
  constructor(private readonly applications: ApplicationsService) {}

  @Post()
  @HttpCode(201)
  @AcceptCredentials('admin', 'api_token')
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Create an application (admin token: in a new account; API token: in its account)' })
  @ApiCreatedResponse({ type: ApplicationDto })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateApplicationDto): Promise<ApplicationDto> {
    return this.applications.create(principal, body);
  }

  @Get()
  @RequireScopes('applications:read')
  @ApiOperation({ summary: "List the applications of the token's account" })
  @ApiPage(ApplicationDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListQueryDto) {
    return this.applications.list(principal, query);
  }

  @Get(':application_id')
  @AcceptCredentials('admin', 'api_token')
  @RequireScopes('applications:read')
  @ApiOkResponse({ type: ApplicationDto })
  get(@CurrentPrincipal() principal: Principal, @Param('application_id') id: string): Promise<ApplicationDto> {
    return this.applications.get(principal, id);
  }

  @Patch(':application_id/settings')
  @AcceptCredentials('admin', 'api_token')
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Change the application\'s settings (browser commit; needs an allowed origin). Goes onto the audit trail.' })
  @ApiOkResponse({ type: ApplicationDto })
  updateSettings(@CurrentPrincipal() principal: Principal, @Param('application_id') id: string, @Body() body: UpdateApplicationSettingsDto): Promise<ApplicationDto> {
    return this.applications.updateSettings(principal, id, body);
  }
}
