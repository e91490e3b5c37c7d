import { Controller, Headers, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { FORM_CONNECTIONS_RECEIVE, FormSubmissionReceiveReply } from '@dcr/contracts';
import { countryOfFormConnectionId, DomainError, isFormConnectionId, isTypeformSignatureForm, notFound, typeformSignatureRefusal, TYPEFORM_TEST_REQUEST_RULE } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { PublicRoute } from '../auth/auth.decorators';
import { RateLimitService } from '../http/rate-limit.service';
import { ErrorBodyDto } from '../openapi/openapi.decorators';
import { FormSubmissionAcceptedDto } from './form-connections.dto';
import { RawBodyRequest } from './raw-body';
import { HomeCountry } from '../residency/home-country';

/**
 * The inbound end of a form connection: Typeform posts each submission here. There is no credential:
 * the `Typeform-Signature` over the raw body, made with the connection's secret, is the credential,
 * and only the decisions service (which keeps the secret) checks it.
 */
@ApiTags('Form connections')
@ApiExtraModels(ErrorBodyDto)
@PublicRoute()
@Controller('hooks')
export class FormHooksController {
  constructor(
    private readonly homeCountry: HomeCountry,
    private readonly clients: ServiceClients,
    private readonly rateLimits: RateLimitService,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('typeform/:connection_id')
  @HttpCode(200)
  @ApiOperation({
    summary: "A connected Typeform form's webhook (the connection's webhook_url)",
    description:
      "Typeform's webhook body, signed as Typeform documents: `Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body>` " +
      "with the connection's secret, or for one day after a rotation the previous secret. A `form_response` is read with the " +
      'mapping against the flow version in force at its `submitted_at` (as the Record API decides against the version in force at ' +
      '`captured_at`: a late or retried delivery is not read with a version activated after it was submitted) and recorded ' +
      'against that version like the Record API with channel `form_platform_webhook` and `collection_platform: typeform`; ' +
      "Typeform's response token is the idempotency key, so a redelivery answers the same record. The builder's test request " +
      `is answered \`{accepted: true, test: true}\` and records nothing; it is recognised as ${TYPEFORM_TEST_REQUEST_RULE}. ` +
      'Bodies up to 512 KiB. Limited per sending address with the per-application bucket sizes (429 with Retry-After).',
  })
  @ApiHeader({ name: 'Typeform-Signature', required: true, description: 'sha256=<base64 HMAC-SHA256 of the raw body, keyed with the secret>' })
  @ApiBody({ schema: { type: 'object', description: 'Typeform webhook payload: {event_id, event_type: "form_response", form_response: {form_id, token, submitted_at, hidden, answers}}' } })
  @ApiOkResponse({ type: FormSubmissionAcceptedDto, description: '`{accepted: true, record_id}`, or `{accepted: true, test: true}` for the test request' })
  @ApiResponse({ status: 400, description: 'The body is not JSON (`malformed_json`, `details` on `body`), or missing (`invalid_request`)', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 401, description: 'Missing signature, or made with no secret of this connection', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 404, description: 'No such connection', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 409, description: "Typeform's response token was delivered before with another body (`idempotency_conflict` on `form_response.token`)", schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 413, description: 'Body larger than 512 KiB', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 421, description: 'A connection of another country', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({
    status: 422,
    description:
      'The submission cannot be recorded: details name the purpose (`decisions.<key>`, also for an answer to a question whose purpose the version ' +
      'in force at `submitted_at` did not have; `mapping.purposes.<key>` for a purpose that version decides and the mapping lacks), `email`, ' +
      '`external_id`, `event_type`, `form_response` or the field of it that is wrong',
    schema: { $ref: getSchemaPath(ErrorBodyDto) },
  })
  @ApiResponse({ status: 429, description: 'Rate limited per sending address; see Retry-After', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  async receive(
    @Param('connection_id') id: string,
    @Headers('typeform-signature') signature: string | undefined,
    @Req() request: RawBodyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    // No credential reaches this route, so it is limited per sending address (the same bucket sizes
    // as an application's) before any work: a flood of forged deliveries costs a lookup and an HMAC each.
    this.rateLimits.enforce(`hook:${request.ip}`, reply);
    if (!isFormConnectionId(id)) throw notFound('Form connection');
    await this.homeCountry.requireHere(countryOfFormConnectionId(id)!, 'form_connection', id, 'Form connection');
    // A signature not in Typeform's form matches no secret: refused here, before the body travels on
    // and the connection is read (a flood of such deliveries held up the real ones).
    if (!isTypeformSignatureForm(signature)) throw new DomainError('unauthenticated', typeformSignatureRefusal(signature));
    if (!request.rawBody) throw new DomainError('invalid_request', 'The request has no body: a Typeform submission is expected');
    return firstValueFrom(
      this.clients.own.send<FormSubmissionReceiveReply>(FORM_CONNECTIONS_RECEIVE, {
        connection_id: id,
        ...(typeof signature === 'string' ? { signature: signature.slice(0, 200) } : {}),
        raw_body: request.rawBody.toString('base64'),
      }),
    );
  }
}
