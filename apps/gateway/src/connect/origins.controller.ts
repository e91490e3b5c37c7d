import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiConflict, ApiErrorResponses, ApiPage } from '../openapi/openapi.decorators';
import { AddAllowedOriginDto, AllowedOriginDto, AllowedOriginEnvelopeDto, ListQueryDto } from './connect.dto';
import { OriginsService } from './origins.service';

@ApiTags('Connect: allowed origins')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin', 'api_token')
@Controller('api/v1/applications/:application_id/allowed_origins')
export class OriginsController {
  constructor(private readonly origins: OriginsService) {}

  @Post()
  @RequireScopes('applications:write')
  @ApiOperation({
    summary: 'Register an allowed origin',
    description:
      'scheme://host[:port] only. Production applications require https; sandbox applications also accept ' +
      'http://localhost and http://127.0.0.1, which then match any port. 201 when added, 200 when it was already registered.',
  })
  @ApiCreatedResponse({ type: AllowedOriginEnvelopeDto, description: 'Added' })
  @ApiOkResponse({ type: AllowedOriginEnvelopeDto, description: 'It was registered already (nothing changed)' })
  async add(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Body() body: AddAllowedOriginDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AllowedOriginEnvelopeDto> {
    const { origin, created } = await this.origins.add(principal, applicationId, body.allowed_origin.origin);
    reply.status(created ? 201 : 200);
    return { allowed_origin: origin };
  }

  @Get()
  @RequireScopes('applications:read')
  @ApiPage(AllowedOriginDto)
  list(@CurrentPrincipal() principal: Principal, @Param('application_id') applicationId: string, @Query() query: ListQueryDto) {
    return this.origins.list(principal, applicationId, query);
  }

  @Delete(':origin')
  @HttpCode(204)
  @RequireScopes('applications:write')
  @ApiOperation({ summary: 'Remove an allowed origin (the origin URL-encoded in the path)' })
  @ApiNoContentResponse()
  @ApiConflict('Browser commit is on and this is the last allowed origin: turn browser commit off first (`details` on `browser_commit`)')
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('application_id') applicationId: string,
    @Param('origin') origin: string,
  ): Promise<void> {
    await this.origins.remove(principal, applicationId, origin);
  }
}
