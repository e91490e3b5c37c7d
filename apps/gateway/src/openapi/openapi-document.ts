import { Inject, Injectable, INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, OpenAPIObject, OperationObject, RequestBodyObject, SwaggerModule } from '@nestjs/swagger';
import { GatewayEnvironment } from '@dcr/config';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import type { FastifyRequest } from 'fastify';
import { ErrorBodyDto } from './openapi.decorators';
import { addWebhooks } from './webhook-events.openapi';

/** The methods of the operations that change something. */
const MUTATING_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch', 'delete']);

/**
 * A read of the API answered by a service over the bus or from the gateway's database (every
 * `GET /api/v1/…`); not one documented as not implemented (501), which reaches neither.
 */
const readsThroughServices = (path: string, method: string, operation: OperationObject): boolean =>
  method === 'get' && path.startsWith('/api/v1/') && operation.responses['501'] === undefined;

/** A response key's place: statuses by number, `default` last. */
const statusOrder = (key: string) => (/^\d+$/.test(key) ? Number(key) : 1000);

const DESCRIPTION = `The Decision, Consent and Receipt Service: one gateway per home country.

Conventions shared by every endpoint:
- Errors: \`{message, code, details?, request_id}\`; 422 \`details\` name the fields; a resource homed in another
  country answers 421 with \`code: wrong_country\` and \`home_country\`, nothing else. A person is homed in the
  country that first records them; the countries agree on it before any of their data is written, so a new person
  sent to two countries at the same moment is recorded in one, and the other answers 421 (a deployment that requires
  that agreement answers 503 \`service_unavailable\` to a request recording someone new while a peer country is unreachable).
- Lists: \`?limit=\` (default 50, max 200) and \`?cursor=\`; answer \`{data, next_cursor}\` (an import's report pages its
  \`rows\` the same way, with \`next_cursor\` beside them and its whole \`summary\` on every page).
- Query parameters: an \`/api/v1/\` operation takes only the query parameters it lists (none if it lists none); any
  other is 400 \`invalid_request\` naming it in \`details\`, and one with an empty name (\`?=x\`) is named by \`field: ""\`
  with a reason saying so; one it takes once, given twice (\`?limit=1&limit=2\`), is named with the reason \`must be given once\`.
- Every operation that changes something, and every read under \`/api/v1/\`, may answer 503 \`service_unavailable\` (a
  service or the database did not answer; \`Retry-After\` when the wait is known): try again.
- A JSON body holding a \`__proto__\` key, or a \`constructor\` key holding \`prototype\`: 400 \`invalid_request\` naming
  each such key's path; text that is not JSON: 400 \`malformed_json\` naming \`body\`. A form body
  (\`application/x-www-form-urlencoded\`) with a field \`__proto__\`, or one that in bracket or dot notation holds
  \`__proto__\` or \`constructor\` followed by \`prototype\` (\`constructor[prototype]\`): the same 400, naming each field as sent.
- Rate limits per application (token bucket, default 100/s, burst 200; the public form-builder hook per
  sending address): \`RateLimit-Policy\` and \`RateLimit\` headers, and \`Retry-After\` on 429.
- Bodies over 1 MiB: 413 (imports and the form-builder hook have their own limits); a body in a media type read for
  no route (\`multipart/form-data\`, \`application/xml\`, …): 415 \`unsupported_media_type\`; nesting deeper than 64
  levels, or text no field can be stored with (U+0000, an unpaired surrogate): 422 naming where. Credentials: API token as
  bearer (server to server), publishable key as \`X-Publishable-Key\` (browser; only session and capture
  creation, and reading a flow's published wording), and the consent field's render proof in the body of its
  own \`embedded_field\` capture. OAuth access tokens, agent tokens and delegation grants are not accepted yet (401 saying so).`;

/** The security scheme of the inbox routes: the person's inbox token, not an API token. */
export const INBOX_TOKEN_SCHEME = 'inbox_token';

/** The OpenAPI 3.1 document, generated once from the controllers and DTOs when the gateway starts. */
@Injectable()
export class OpenApiDocument {
  private document?: OpenAPIObject;
  /** The POST routes whose answer is kept under an `Idempotency-Key` (noted as routes register). */
  private readonly idempotentPosts = new Set<string>();
  /** Each route's required API token scopes, by `METHOD /openapi/{path}` (noted as routes register). */
  private readonly scopes = new Map<string, { all: string[]; any: string[] }>();

  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  build(app: INestApplication): void {
    const config = new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Decision, Consent and Receipt Service')
      .setDescription(DESCRIPTION)
      .setVersion('v1')
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque',
        description: 'API token (opaque, not a JWT). An operation lists the scopes the token needs in its `bearer` security requirement and in `x-required-scopes`.',
      })
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'opaque',
          description:
            "The person's inbox token (`inb_…`, 12 hours) from `POST /api/v1/inbox/session`: the inbox routes of the country that issued it take it, never an API token. Another country answers it 421 `wrong_country` with that country.",
        },
        INBOX_TOKEN_SCHEME,
      )
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Publishable-Key' }, 'publishable_key')
      .build();
    this.document = SwaggerModule.createDocument(app, config);
    this.addScopes(this.document);
    this.addIdempotencyKey(this.document);
    this.addUnsupportedMediaType(this.document);
    this.addServiceUnavailable(this.document);
    this.dropBodyLimitFromReads(this.document);
    this.dropAuthorizationParameters(this.document);
    addWebhooks(this.document);
  }

  /**
   * A route reading `@Headers('authorization')` itself (the inbox routes, which take an inbox token)
   * is documented by Nest with an `authorization` header parameter, required; OpenAPI ignores such a
   * parameter (the credential is the operation's security requirement), and a generated client would
   * ask for the token twice. Taken off here.
   */
  private dropAuthorizationParameters(document: OpenAPIObject): void {
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item as Record<string, OperationObject>)) {
        if (typeof operation !== 'object' || !Array.isArray(operation?.parameters)) continue;
        operation.parameters = operation.parameters.filter((parameter) => !('in' in parameter && parameter.in === 'header' && parameter.name.toLowerCase() === 'authorization'));
      }
    }
  }

  /**
   * A GET reads no body (the gateway ignores one, whatever its size), so no GET answers 413; the
   * controller-wide error responses (ApiErrorResponses) list it for every operation, and it is taken
   * off the GETs here.
   */
  private dropBodyLimitFromReads(document: OpenAPIObject): void {
    for (const item of Object.values(document.paths)) {
      const read = (item as Record<string, OperationObject>).get;
      if (read?.responses) delete read.responses['413'];
    }
  }

  /**
   * Every operation that takes a body answers 415 `unsupported_media_type` to a body in a media type
   * the gateway reads for no route (multipart/form-data, XML, …): the body parser refuses it before
   * the route runs, so no controller declares it; it is added here, with the error body, to each such
   * operation.
   */
  private addUnsupportedMediaType(document: OpenAPIObject): void {
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item as Record<string, OperationObject>)) {
        if (typeof operation !== 'object' || !operation?.requestBody || !operation.responses || operation.responses['415']) continue;
        const types = Object.keys((operation.requestBody as RequestBodyObject).content ?? {}).map((type) => `\`${type}\``);
        const refusal = {
          description: `The body is in a media type this route does not read (\`multipart/form-data\`, XML, …): send ${types.join(' or ') || 'it as documented'} (\`unsupported_media_type\`)`,
          content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } },
        };
        // In the order of the statuses, as the others are.
        operation.responses = Object.fromEntries(Object.entries({ ...operation.responses, 415: refusal }).sort(([a], [b]) => statusOrder(a) - statusOrder(b)));
      }
    }
  }

  /**
   * Every operation that changes something, and every read of the API (`/api/v1/`) but one that
   * answers only 501, reaches the message bus (a service that does not answer
   * is a 503, `libs/transport` rpc-errors) or the gateway's own database (an Idempotency-Key's claim,
   * the gateway's tables: a lost connection is a 503 with `Retry-After: 1`, error-responder.ts), and a
   * service's lost database connection crosses the bus as the same 503. No controller declares it for
   * those causes, so it is added here, with the error body, to each such operation; a route's own 503
   * (its own cause, its own schema) keeps both and names these causes beside its own.
   */
  private addServiceUnavailable(document: OpenAPIObject): void {
    const unavailable =
      'A service this request needs, or the database, did not answer (`service_unavailable`; `Retry-After` when the wait is known, as for a lost database connection): try again';
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
        if (typeof operation !== 'object' || !operation?.responses) continue;
        if (!MUTATING_METHODS.has(method) && !readsThroughServices(path, method, operation)) continue;
        const own = operation.responses['503'] as { description?: string } | undefined;
        const answer = own
          ? { ...own, description: `${own.description}; or: ${unavailable}` }
          : { description: unavailable, content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } } };
        operation.responses = Object.fromEntries(Object.entries({ ...operation.responses, 503: answer }).sort(([a], [b]) => statusOrder(a) - statusOrder(b)));
      }
    }
  }

  /** Notes a POST route that takes `Idempotency-Key` (`path` as Fastify writes it, `:param`). */
  noteIdempotencyKey(path: string): void {
    this.idempotentPosts.add(path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'));
  }

  /**
   * Every POST whose answer the gateway keeps under an `Idempotency-Key` (every mutating POST but the
   * inbox's trade of a code for a token: docs/api.md, Idempotency) documents the header, as the
   * gateway checks it (1 to 255 visible ASCII characters, else 400 naming it), and the 409
   * `idempotency_conflict` of the same key with another request, beside any 409 of its own.
   */
  private addIdempotencyKey(document: OpenAPIObject): void {
    const conflict = 'The Idempotency-Key was used with a different request (method, path or body), or its first request is still being processed (`idempotency_conflict`, `details` on `Idempotency-Key`)';
    for (const [path, item] of Object.entries(document.paths)) {
      const operation = (item as Record<string, OperationObject>).post;
      if (!operation || !this.idempotentPosts.has(path)) continue;
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes the request once for the key: a repeat with the same key and request (method, path, canonical JSON body) within 24 hours answers the first answer again, with `Idempotent-Replayed: true`; 5xx answers are not kept',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
      ];
      const responses = (operation.responses ??= {});
      const own = responses['409'] as { description?: string } | undefined;
      const refusal = own ? { ...own, description: `${own.description}; or: ${conflict}` } : { description: conflict, content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } } };
      operation.responses = Object.fromEntries(Object.entries({ ...responses, 409: refusal }).sort(([a], [b]) => statusOrder(a) - statusOrder(b)));
    }
  }

  /**
   * Notes a route's required scopes, every one of `scopes` and one of `anyScope` (`path` as Fastify
   * writes it, `:param`), for the document built after the routes.
   */
  noteScopes(methods: string[], path: string, scopes: string[], anyScope: string[] = []): void {
    if (scopes.length === 0 && anyScope.length === 0) return;
    const openApiPath = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) this.scopes.set(`${method.toUpperCase()} ${openApiPath}`, { all: scopes, any: anyScope });
  }

  /**
   * Every operation an API token may call names the scopes it needs: as the roles of its `bearer`
   * security requirement (OpenAPI 3.1 allows them for any scheme), as `x-required-scopes`, and in
   * words in its description. A token without one of them is answered 403 naming it. Scopes of which
   * one is enough are alternative requirements (one `bearer` requirement each, OpenAPI's "or") and
   * `x-required-scopes-any`.
   */
  private addScopes(document: OpenAPIObject): void {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, { security?: Array<Record<string, string[]>>; description?: string } & Record<string, unknown>>)) {
        const noted = this.scopes.get(`${method.toUpperCase()} ${path}`);
        if (!noted || typeof operation !== 'object' || !operation) continue;
        const { all, any } = noted;
        const alternatives = any.length > 0 ? any.map((scope) => [...all, scope]) : [all];
        operation.security = (operation.security ?? [{ bearer: [] }]).flatMap((requirement) =>
          'bearer' in requirement ? alternatives.map((bearer) => ({ ...requirement, bearer })) : [requirement],
        );
        const quoted = (scopes: string[]) => scopes.map((scope) => `\`${scope}\``).join(', ');
        const needs: string[] = [];
        if (all.length > 0) {
          operation['x-required-scopes'] = all;
          needs.push(`API token scope${all.length > 1 ? 's' : ''}: ${quoted(all)}.`);
        }
        if (any.length > 0) {
          operation['x-required-scopes-any'] = any;
          needs.push(`API token scope${all.length > 0 ? ', and besides those' : ''}: one of ${quoted(any)}.`);
        }
        operation.description = [operation.description, ...needs].filter(Boolean).join('\n\n');
      }
    }
  }

  forBaseUrl(baseUrl: string): OpenAPIObject {
    if (!this.document) throw new Error('OpenAPI document requested before the gateway finished starting');
    return { ...this.document, servers: [{ url: baseUrl, description: `${this.context.env.COUNTRY} gateway` }] };
  }

  baseUrl(request: FastifyRequest): string {
    const configured = (this.context.env as GatewayEnvironment).PUBLIC_BASE_URL;
    return configured ?? `${request.protocol}://${request.host}`;
  }
}
