import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { DomainError } from '@dcr/domain';
import { PublicRoute } from '../auth/auth.decorators';
import { ApiErrorResponses, ApiNotImplemented } from '../openapi/openapi.decorators';

const OIDC = 'The OpenID Connect provider (authorization, PAR, token, token exchange and its discovery document) is not implemented yet';
const MCP = 'The MCP gateway for AI agents (its agent endpoint, discovery and escalations) is not implemented yet';

/**
 * The specification's OpenID Connect and MCP endpoints (Endpoints: OAuth, agents, discovery), which
 * are not built yet. Each answers 501 saying so, so that a client (an OIDC library reading the
 * discovery document, an MCP client) learns that rather than a 404 that reads as a wrong address.
 */
@ApiTags('Not implemented')
@ApiErrorResponses()
@PublicRoute()
@Controller()
export class AgentsAndOidcController {
  @Get('.well-known/openid-configuration')
  @ApiOperation({ summary: 'Not implemented yet (501): the OpenID provider discovery document' })
  @ApiNotImplemented(OIDC)
  openidConfiguration(): never {
    throw new DomainError('not_implemented', OIDC);
  }

  @Get('oauth/authorize')
  @ApiOperation({ summary: 'Not implemented yet (501): the authorization endpoint of the OpenID provider' })
  @ApiNotImplemented(OIDC)
  authorize(): never {
    throw new DomainError('not_implemented', OIDC);
  }

  @Post(['oauth/token', 'oauth/par', 'oauth2/par', 'oauth/token/exchange'])
  @HttpCode(501)
  @ApiOperation({ summary: 'Not implemented yet (501): the token, pushed authorization request and token exchange endpoints of the OpenID provider' })
  @ApiNotImplemented(OIDC)
  oauth(): never {
    throw new DomainError('not_implemented', OIDC);
  }

  @Get('.well-known/mcp-configuration')
  @ApiOperation({ summary: 'Not implemented yet (501): Model Context Protocol discovery' })
  @ApiNotImplemented(MCP)
  mcpConfiguration(): never {
    throw new DomainError('not_implemented', MCP);
  }

  @Post('mcp/v1/agent')
  @HttpCode(501)
  @ApiOperation({ summary: 'Not implemented yet (501): the MCP agent gateway' })
  @ApiNotImplemented(MCP)
  mcpAgent(): never {
    throw new DomainError('not_implemented', MCP);
  }

  @Get(['mcp/v1/agent', 'api/v1/oap/escalations', 'api/v1/oap/escalations/:escalation_id'])
  @ApiOperation({ summary: 'Not implemented yet (501): the MCP agent gateway and its escalations to a person' })
  @ApiNotImplemented(MCP)
  mcp(): never {
    throw new DomainError('not_implemented', MCP);
  }
}
