import { Controller, Get, Header, Inject, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { AcceptCredentials } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { IndexedApplication } from './credential-index';
import { DirectRoute } from '../http/direct-route';
import type { DirectRequest } from '../http/direct-lane';
import { ApiErrorResponses } from '../openapi/openapi.decorators';

class MeCredentialDto {
  @ApiProperty({ enum: ['api_token', 'admin'] }) kind: string;
  @ApiPropertyOptional({ example: 'api_token_0123456789abcdef' }) id?: string;
  @ApiProperty({ type: [String] }) scopes: string[];
}

class MeApplicationDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) environment: string;
}

export class MeDto {
  @ApiProperty({ nullable: true, type: String }) application_id: string | null;
  @ApiProperty({ type: MeApplicationDto, nullable: true }) application: MeApplicationDto | null;
  @ApiProperty({ nullable: true, type: String }) account_id: string | null;
  @ApiProperty({ type: MeCredentialDto }) credential: MeCredentialDto;
  @ApiProperty({ example: 'US', description: 'The country whose endpoint answered' }) country: string;
}

@ApiTags('Connect: identity')
@ApiBearerAuth()
@ApiErrorResponses()
@Controller('api/v1/me')
export class MeController {
  private readonly country: string;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    this.country = context.env.COUNTRY;
  }

  /**
   * The answer is a function of the credential alone, and `/me` is the route clients call most (a
   * health check of their token), so its JSON is made once per token. Keyed by the application
   * object of the credential index, which replaces that object whenever the application changes
   * (name, tokens, scopes), so a changed application is never answered from an old body.
   */
  private readonly bodies = new WeakMap<IndexedApplication, Map<string, string>>();

  @Get()
  @AcceptCredentials('api_token', 'admin')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ type: MeDto })
  // Answered without Nest's pipeline (see DirectRoute), so it reads the request, not @CurrentPrincipal().
  @DirectRoute()
  me(@Req() request: DirectRequest): string {
    const { principal } = request;
    if (!principal) throw new Error('unreachable: /me is an authenticated route');
    if (principal.kind === 'admin') return JSON.stringify(this.body(principal));
    if (principal.kind !== 'api_token') throw new Error('unreachable: /me accepts API tokens and the admin token only');
    let byToken = this.bodies.get(principal.application);
    if (!byToken) {
      byToken = new Map();
      this.bodies.set(principal.application, byToken);
    }
    let body = byToken.get(principal.tokenId);
    if (body === undefined) {
      body = JSON.stringify(this.body(principal));
      byToken.set(principal.tokenId, body);
    }
    return body;
  }

  private body(principal: Principal): MeDto {
    if (principal.kind === 'admin') {
      return { application_id: null, application: null, account_id: null, credential: { kind: 'admin', scopes: [] }, country: this.country };
    }
    if (principal.kind !== 'api_token') throw new Error('unreachable: /me accepts API tokens and the admin token only');
    const { application } = principal;
    return {
      application_id: application.id,
      application: { id: application.id, name: application.name, environment: application.environment },
      account_id: application.accountId,
      credential: { kind: 'api_token', id: principal.tokenId, scopes: principal.scopes },
      country: this.country,
    };
  }
}
