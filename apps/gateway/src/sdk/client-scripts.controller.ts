import { Controller, Get, Headers, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicRoute } from '../auth/auth.decorators';
import { publicBaseUrl } from '../http/public-url';
import { ErrorBodyDto } from '../openapi/openapi.decorators';
import { ClientScript, ClientScripts } from './client-scripts';
import { ClientScriptEntryDto, ClientScriptManifestDto } from './sdk.dto';

/** The path carries the major version (v1): a file under it changes only compatibly. */
const SCRIPT_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const MANIFEST_CACHE_CONTROL = 'public, max-age=300';

/** The encoding to send: brotli, else gzip, when the client accepts it (and did not refuse it with q=0). */
export function chooseEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | undefined {
  const accepted = new Set(
    (acceptEncoding ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase().split(';'))
      .filter(([, ...params]) => !params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(param)))
      .map(([coding]) => coding),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '');
    return value === '*' || value === etag;
  });
}

const SCRIPT_HEADERS = {
  'Access-Control-Allow-Origin': { description: '`*`: module scripts are fetched with CORS', schema: { type: 'string' } },
  'Cache-Control': { description: `\`${SCRIPT_CACHE_CONTROL}\`` , schema: { type: 'string' } },
  ETag: { description: 'Strong validator of the bytes (suffixed per content encoding); If-None-Match answers 304', schema: { type: 'string' } },
  'X-Integrity': { description: 'The SHA-384 Subresource Integrity value of the (decoded) bytes, as in the manifest', schema: { type: 'string' } },
};

/**
 * The browser client scripts: ES modules read once at start from libs/client-sdk's build output,
 * served with CORS for everyone, a long-lived cache, ETags and their SRI integrity values.
 */
@ApiTags('Client scripts')
@ApiExtraModels(ClientScriptEntryDto)
@PublicRoute()
@Controller()
export class ClientScriptsController {
  constructor(
    private readonly scripts: ClientScripts,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Get(['sdk/v1/manifest.json', 'js/v1/manifest.json'])
  @ApiOperation({
    summary: 'The client scripts with their integrity values',
    description: 'Each file with its SHA-384 integrity, size and imports, and every module each entry point loads (to pin them all with `modulepreload`).',
  })
  @ApiOkResponse({ type: ClientScriptManifestDto })
  manifest(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const manifest = this.scripts.manifest(publicBaseUrl(this.context.env as GatewayEnvironment, request));
    return reply
      .status(200)
      .header('access-control-allow-origin', '*')
      .header('cache-control', MANIFEST_CACHE_CONTROL)
      .type('application/json; charset=utf-8')
      .send(manifest);
  }

  @Get(['sdk/v1/:file', 'js/v1/:file'])
  @ApiOperation({
    summary: 'A client script (ES module)',
    description:
      'Entry points: `/sdk/v1/service.js` (the core: exports `Service`, sets `window.Service`), `/sdk/v1/service-field.js` ' +
      '(defines the `service-consent-field` element), ' +
      '`/js/v1/service-decision.js` (the `service-decision` element). Their sibling modules are served under both folders. ' +
      'Load with `<script type="module" integrity="sha384-…" src="…">`; brotli or gzip when accepted.',
  })
  @ApiParam({ name: 'file', example: 'service.js' })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'The module', headers: SCRIPT_HEADERS })
  @ApiResponse({ status: 304, description: 'If-None-Match matched the ETag' })
  @ApiResponse({ status: 404, description: 'No such script', content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } } })
  @ApiResponse({ status: 503, description: 'The scripts are not built on this gateway (development only)', content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } } })
  script(
    @Param('file') file: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Headers('accept-encoding') acceptEncoding: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const script: ClientScript = this.scripts.get(file);
    const encoding = chooseEncoding(acceptEncoding);
    const etag = encoding ? `${script.etag.slice(0, -1)}-${encoding}"` : script.etag;
    void reply
      .header('access-control-allow-origin', '*')
      .header('access-control-expose-headers', 'ETag, X-Integrity')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('cache-control', SCRIPT_CACHE_CONTROL)
      .header('etag', etag)
      .header('x-integrity', script.integrity)
      .header('vary', 'Accept-Encoding')
      .header('x-content-type-options', 'nosniff');
    if (etagMatches(ifNoneMatch, etag)) return reply.status(304).send();
    if (encoding) void reply.header('content-encoding', encoding);
    const body = encoding === 'br' ? script.brotli : encoding === 'gzip' ? script.gzip : script.body;
    return reply.status(200).type('text/javascript; charset=utf-8').send(body);
  }
}
