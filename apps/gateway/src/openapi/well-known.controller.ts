import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicRoute } from '../auth/auth.decorators';
import { OpenApiDocument } from './openapi-document';

const API_CATALOG_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';

/**
 * Discovery: the OpenAPI 3.1 document generated from the code, and the RFC 9727 API catalog (Fastify
 * answers HEAD for it too, with the same `Link: rel="api-catalog"` header).
 */
@ApiExcludeController()
@PublicRoute()
@Controller('.well-known')
export class WellKnownController {
  constructor(private readonly openApi: OpenApiDocument) {}

  @Get('openapi')
  openapi(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    void reply
      .type('application/vnd.oai.openapi+json; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(this.openApi.forBaseUrl(this.openApi.baseUrl(request)));
  }

  @Get('api-catalog')
  catalog(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const base = this.openApi.baseUrl(request);
    void reply
      .type(API_CATALOG_TYPE)
      .header('link', `<${base}/.well-known/api-catalog>; rel="api-catalog"`)
      .send({
        linkset: [
          { anchor: `${base}/.well-known/api-catalog`, item: [{ href: `${base}/api/v1/` }] },
          {
            anchor: `${base}/api/v1/`,
            'service-desc': [{ href: `${base}/.well-known/openapi`, type: 'application/vnd.oai.openapi+json' }],
            status: [{ href: `${base}/readyz`, type: 'application/json' }],
          },
        ],
      });
  }
}
