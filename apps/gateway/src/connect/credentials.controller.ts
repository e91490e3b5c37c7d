import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import {
  ApiTokenDto,
  CreateApiTokenDto,
  CreatedApiTokenDto,
  CreatedPublishableKeyDto,
  ListQueryDto,
  PublishableKeyDto,
} from './connect.dto';
import { CredentialsService } from './credentials.service';

@ApiTags('Connect: credentials')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/applications/:application_id')
export class CredentialsController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post('api_tokens')
  @HttpCode(201)
  @RequireScopes('applications:write')
  @ApiOperation({
    summary: 'Create an API token; its value is shown once and stored only as a hash',
    description:
      'A token grants no more than it holds: without `scopes` the new token gets the scopes of the token creating it (the admin token: all of them); ' +
      'a scope the creating token lacks is a 403 naming it (`details` on `scopes`).',
  })
  @ApiCreatedResponse({ type: CreatedApiTokenDto })
  createApiToken(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Body() body: CreateApiTokenDto,
  ): Promise<CreatedApiTokenDto> {
    return this.credentials.createApiToken(principal, applicationId, body);
  }

  @Get('api_tokens')
  @RequireScopes('applications:read')
  @ApiOperation({ summary: 'List API token records (never their values), with last use seen by this country' })
  @ApiPage(ApiTokenDto)
  listApiTokens(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Query() query: ListQueryDto) {
    return this.credentials.listApiTokens(principal, applicationId, query);
  }

  @Delete('api_tokens/:token_id')
  @HttpCode(204)
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Revoke an API token' })
  @ApiNoContentResponse()
  async revokeApiToken(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('token_id') tokenId: string,
  ): Promise<void> {
    await this.credentials.revokeApiToken(principal, applicationId, tokenId);
  }

  @Post('publishable_keys')
  @HttpCode(201)
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Create a publishable key (pk_test_ for sandbox, pk_live_ for production)' })
  @ApiCreatedResponse({ type: CreatedPublishableKeyDto })
  createPublishableKey(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
  ): Promise<CreatedPublishableKeyDto> {
    return this.credentials.createPublishableKey(principal, applicationId);
  }

  @Get('publishable_keys')
  @RequireScopes('applications:read')
  @ApiPage(PublishableKeyDto)
  listPublishableKeys(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Query() query: ListQueryDto,
  ) {
    return this.credentials.listPublishableKeys(principal, applicationId, query);
  }

  @Delete('publishable_keys/:key_id')
  @HttpCode(204)
  @RequireScopes('applications:write')
  @ApiNoContentResponse()
  async revokePublishableKey(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('key_id') keyId: string,
  ): Promise<void> {
    await this.credentials.revokePublishableKey(principal, applicationId, keyId);
  }
}
