import { Body, Controller, Headers, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiSecurity, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { AuthorizeCaptureReply, CAPTURE_TOKEN, CAPTURES_AUTHORIZE, CAPTURES_CREATE, CaptureCreatedReply } from '@dcr/contracts';
import {
  captureRetry,
  decisionShapeIssues,
  DomainError,
  FieldIssue,
  fieldDecisionIssues,
  fieldRenderingEvidence,
  notFound,
  originMatches,
  validationFailed,
  VISIBILITY_MEASUREMENTS,
  VisibilityMeasurement,
} from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { checkAsMessage } from '@dcr/transport';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiConflict, ApiErrorResponses, ApiWrongCountry, ErrorBodyDto } from '../openapi/openapi.decorators';
import { RenderProofs, VerifiedRenderProof } from '../sdk/render-proofs';
import { RECORD_STATUS_RULE, RecordSubjectDto, SUBJECT_REQUIRED } from './records.dto';
import { audienceOf, HomeCountry } from '../residency/home-country';
import { AccountApplications } from '../auth/account-applications';
import { IdempotencyClaim, IdempotencyClaimOf } from '../idempotency/idempotency-claim';

/** What the consent field's frame observed, sent with an `embedded_field` capture. */
export class RenderingEvidenceDto {
  @ApiProperty({ description: 'The host origin as the browser states it (the origin of the host page\'s messages to the frame, or location.ancestorOrigins)', example: 'https://shop.example' })
  @IsString()
  @Length(1, 2048)
  host_origin: string;

  @ApiProperty({
    description: 'Per rendered control: whether the person changed it, and whether only by trusted gestures (event.isTrusted)',
    example: { newsletter: { changed: true, trusted_gesture: true }, fraud: { changed: false, trusted_gesture: false } },
  })
  @IsObject()
  controls: Record<string, { changed: boolean; trusted_gesture: boolean }>;

  @ApiPropertyOptional({ description: 'Whether the field was visible when the form was submitted (absent when not measured)' })
  @IsOptional()
  @IsBoolean()
  visible_at_submit?: boolean;

  @ApiProperty({ enum: VISIBILITY_MEASUREMENTS, description: 'How visibility was measured: IntersectionObserver v2 (occlusion counts), v1 (in the viewport), or not at all' })
  @IsIn(VISIBILITY_MEASUREMENTS as unknown as string[])
  visibility_measurement: VisibilityMeasurement;
}

export class CreateCaptureDto {
  /** A malformed decision is named beside the body's other malformed fields (EdgeValidationPipe). */
  static companionIssues(body: Record<string, unknown>) {
    return decisionShapeIssues(body.decisions);
  }

  @ApiProperty({ example: 'flw_dev_0123456789abcdef' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;

  @ApiProperty({ enum: ['form_capture', 'embedded_field'] })
  @IsIn(['form_capture', 'embedded_field'])
  channel: 'form_capture' | 'embedded_field';

  @ApiProperty({ description: 'Purpose key → {decision, default_checked, mandatory}: the state of each control, nothing else', example: { newsletter: { decision: 'granted', default_checked: false, mandatory: false } } })
  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @ApiPropertyOptional({ description: 'Purpose key → SHA-256 (hex) of the label text shown, read in Unicode NFC, without U+00AD, U+200B, U+2060 and U+FEFF, whitespace collapsed and trimmed (as the client script reads it); compared with the published wording read the same way (match/drift, recorded, never refused)' })
  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @ApiPropertyOptional({
    description:
      '`embedded_field` only, and required there: the render proof of the consent field page, which authenticates the capture in place of the publishable key (the frame posts it; it captures once and is valid an hour)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  render_proof?: string;

  @ApiPropertyOptional({ type: RenderingEvidenceDto, description: '`embedded_field` only, and required there: what the frame observed (kept as the receipt\'s rendering_evidence with the proof\'s facts)' })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => RenderingEvidenceDto)
  rendering_evidence?: RenderingEvidenceDto;

  @ApiPropertyOptional({
    description:
      'Browser commit: record at once, on the lower-assurance `<channel>_browser` channel, and answer `record_id` and `channel` too. Only when the application has browser commit on (`PATCH /api/v1/applications/<id>/settings`), otherwise 422; needs `subject` (`{email, external_id?}`; without it 422 on `subject`). The receipt e-mail is sent.',
  })
  @IsOptional()
  @IsBoolean()
  commit?: boolean;

  @ApiPropertyOptional({ type: RecordSubjectDto, description: 'The person, only with `commit: true`' })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => RecordSubjectDto)
  subject?: RecordSubjectDto;
}

/** A capture: its token, for the organisation's server to commit; with browser commit, the record made too. */
export class CaptureCreatedDto {
  @ApiProperty({ example: 'cap_us0123456789abcdefghijklmnopqrst', description: "Names the country holding the capture; committed with POST /api/v1/decisions/<capture_token>/authorize" })
  capture_token: string;

  @ApiProperty({ format: 'date-time', description: 'Until when the capture can be committed (24 hours)' })
  expires_at: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['match', 'drift'] },
    example: { newsletter: 'match', analytics: 'drift' },
    description: "With `labels`: per purpose, whether the label's digest is the published wording's",
  })
  wording_verdict?: Record<string, 'match' | 'drift'>;

  @ApiPropertyOptional({ example: 'rec_us0123456789abcdefghij', description: 'Browser commit only: the record made' })
  record_id?: string;

  @ApiPropertyOptional({ enum: ['form_capture_browser', 'embedded_field_browser'], description: 'Browser commit only: the record\'s channel' })
  channel?: string;
}

/** A committed capture: the record it made (or made before, for the same person). */
export class CaptureAuthorizedDto {
  @ApiProperty({ enum: ['granted', 'declined'], description: RECORD_STATUS_RULE })
  status: 'granted' | 'declined';

  @ApiProperty({ example: 'rec_us0123456789abcdefghij' })
  record_id: string;

  @ApiProperty({
    enum: ['form_capture', 'embedded_field', 'form_capture_browser', 'embedded_field_browser'],
    description: "The record's channel: the capture's own, or its `_browser` channel when the browser committed it first",
  })
  channel: string;
}

/**
 * A browser commit's 421: the person is homed in another country, and the capture was kept for the
 * organisation's server to commit there; or, without a capture token, a retry whose Idempotency-Key's
 * capture the person's home made (send the retry there).
 */
export class BrowserCommitWrongCountryDto {
  // Only ever the 421 (the error body's fields, with a wrong_country answer's examples; the home country always there).
  @ApiProperty({ example: "This resource is served from its home country DE; send the request to that country's endpoint" }) message: string;
  @ApiProperty({ example: 'wrong_country', enum: ['wrong_country'] }) code: string;
  @ApiProperty({ example: 'req_0123456789abcdef' }) request_id: string;
  @ApiProperty({ example: 'DE', description: "The person's home country: authorize the capture there" }) home_country: string;

  @ApiPropertyOptional({
    example: 'cap_de0123456789abcdefghijklmnopqrst',
    description: "The capture, kept uncommitted: authorize it at the home country's endpoint. Absent when the Idempotency-Key's capture was made at the home country's endpoint: retry there",
  })
  capture_token?: string;

  @ApiPropertyOptional({ example: '2026-11-21T10:00:00.000Z', description: 'Until when the capture can be committed (with capture_token)' })
  expires_at?: string;
}

export class AuthorizeCaptureDto {
  @ApiProperty({ type: RecordSubjectDto })
  @IsDefined({ message: SUBJECT_REQUIRED })
  @ValidateNested()
  @IsObject()
  @Type(() => RecordSubjectDto)
  subject: RecordSubjectDto;

  @ApiPropertyOptional({ description: 'true: no receipt e-mail' })
  @IsOptional()
  @IsBoolean()
  suppress_receipt?: boolean;
}

/** What a commit without `subject` is refused with: a commit's own rules (AuthorizeCaptureDto), the Record API's. */
function missingSubjectIssues(): FieldIssue[] {
  const checked = checkAsMessage(AuthorizeCaptureDto, {});
  return 'issues' in checked ? checked.issues : [{ field: 'subject', reason: SUBJECT_REQUIRED }];
}

/**
 * Consent inside the organisation's own form: the browser posts a capture with the publishable key
 * (from an allowed origin), or the consent field's frame with its render proof; the organisation's
 * server commits it with the person's e-mail.
 */
@ApiTags('Consent records')
@ApiErrorResponses()
@Controller()
export class CapturesController {
  constructor(
    private readonly clients: ServiceClients,
    private readonly proofs: RenderProofs,
    private readonly homeCountry: HomeCountry,
    private readonly accounts: AccountApplications,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/captures')
  @AcceptCredentials('publishable_key', 'render_proof')
  @ApiSecurity('publishable_key')
  @ApiOperation({
    summary: 'Capture the consent controls of a form; answers a capture token held 24 hours',
    description:
      '`form_capture` (the capture snippet): with the publishable key, from an allowed origin (a request without an `Origin` header is 403 `origin_not_allowed`). `embedded_field` (the consent field): posted by the field\'s frame ' +
      'without a credential header, authenticated by `render_proof` (signature, freshness, flow and version, the host origin still allowed; each proof captures once, ' +
      'a replay is 401); the decisions must be exactly the rendered controls as rendered, and `rendering_evidence` says what the browser observed. ' +
      'With an `Idempotency-Key` the capture is made once for the key (24 hours): a retry with the same key and body answers the same capture token (and, with ' +
      'browser commit, the same record), also after a lost 5xx answer the gateway did not keep, for duplicates sent at once, and for a consent field\'s spent proof; ' +
      'without the header each request makes a capture (and with browser commit a record).',
  })
  @ApiConflict('`idempotency_conflict` on `Idempotency-Key`: the key was used with another body (or is still being processed)')
  @ApiCreatedResponse({ type: CaptureCreatedDto, description: '`{capture_token, expires_at, wording_verdict?}`; with browser commit also `{record_id, channel}`' })
  @ApiExtraModels(BrowserCommitWrongCountryDto)
  @ApiResponse({
    status: 421,
    description:
      "Browser commit for a person homed in another country: `wrong_country` with `home_country`, and the capture kept uncommitted (`capture_token`, `expires_at`) for the organisation's server to authorize at that country's endpoint; " +
      "without them, a retry under an Idempotency-Key whose capture that country's endpoint made first: send the retry there, which answers it",
    schema: { $ref: getSchemaPath(BrowserCommitWrongCountryDto) },
  })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateCaptureDto,
    @Headers('origin') origin?: string,
    @IdempotencyClaim() claim?: IdempotencyClaimOf,
  ): Promise<CaptureCreatedReply> {
    if (principal.kind !== 'publishable_key' && principal.kind !== 'render_proof') throw new DomainError('forbidden', 'Captures are made with the publishable key');
    const field = body.channel === 'embedded_field' ? await this.fieldCapture(principal, body) : this.formCapture(principal, body, origin);
    if (body.commit && !principal.application.browserCommit) {
      throw validationFailed([{ field: 'commit', reason: 'browser commit is not enabled for this application; commit from your server with authorize' }]);
    }
    // The object is missing: refused by the rules of a commit's `subject`, which are the Record API's,
    // so it is named and worded as a record without one is.
    if (body.commit && !body.subject) throw validationFailed(missingSubjectIssues());
    if (!body.commit && body.subject) throw validationFailed([{ field: 'subject', reason: 'only with commit: true; otherwise your server gives the person when it authorizes' }]);
    return firstValueFrom(
      this.clients.own.send<CaptureCreatedReply>(CAPTURES_CREATE, {
        application_id: principal.application.id,
        flow_id: body.flow_id,
        channel: body.channel,
        decisions: body.decisions,
        labels: body.labels,
        origin: field ? field.proof.host_origin : origin,
        ...(field ? { render: { nonce: field.proof.nonce, flow_version: field.proof.flow_version }, rendering_evidence: field.evidence } : {}),
        ...(body.commit ? { commit: { subject: body.subject } } : {}),
        // The gateway keeps no answer of a 5xx: a retry under the key must find the capture made.
        ...(claim ? { retry: captureRetry(claim.scope, claim.key, claim.body, this.context.env.SUBJECT_REF_KEY) } : {}),
      }),
    );
  }

  /**
   * An `embedded_field` capture: its render proof verified (by the Authenticator when it was the credential),
   * its decisions exactly the rendered controls as rendered, and its rendering evidence built from the
   * proof's facts and what the frame observed.
   */
  private async fieldCapture(principal: Extract<Principal, { kind: 'publishable_key' | 'render_proof' }>, body: CreateCaptureDto) {
    if (typeof body.render_proof !== 'string') {
      throw validationFailed([{ field: 'render_proof', reason: "embedded_field captures are posted by the consent field's frame with its render proof" }]);
    }
    const proof: VerifiedRenderProof = principal.kind === 'render_proof' ? principal.proof : await this.proofs.verify(body.render_proof);
    if (proof.application_id !== principal.application.id) throw new DomainError('forbidden', 'The render proof was made for another application');
    const { application } = principal;
    if (principal.kind === 'publishable_key' && !originMatches(proof.host_origin, application.origins, application.environment)) {
      throw new DomainError('origin_not_allowed', `The field was rendered for ${proof.host_origin}, which is no longer an allowed origin of this application`);
    }
    const issues: FieldIssue[] = [];
    if (body.flow_id !== proof.flow_id) issues.push({ field: 'flow_id', reason: `differs from the flow the field was rendered for (${proof.flow_id})` });
    if (body.labels !== undefined) issues.push({ field: 'labels', reason: 'the consent field renders the published wording itself; labels belong to form_capture' });
    issues.push(...fieldDecisionIssues(proof.rendered, body.decisions));
    if (!body.rendering_evidence) issues.push({ field: 'rendering_evidence', reason: 'is required with embedded_field: what the frame observed' });
    if (issues.length > 0) throw validationFailed(issues, 'The capture does not match the rendered consent field');
    const evidence = fieldRenderingEvidence(
      { noticeVersion: proof.notice_version, renderedAt: proof.rendered_at, hostOrigin: proof.host_origin, locale: proof.locale, rendered: proof.rendered },
      body.rendering_evidence!,
    );
    return { proof, evidence };
  }

  /**
   * A `form_capture`: the publishable key's, without anything of the consent field, from the browser
   * on an allowed origin. The Authenticator refuses an Origin that is not allowed; a request without
   * one is not a browser's (the publishable key is public, so anyone could post it from a server) and
   * is refused too, since the capture would attest a form nobody saw.
   */
  private formCapture(principal: Principal, body: CreateCaptureDto, origin: string | undefined): undefined {
    if (principal.kind === 'render_proof') throw validationFailed([{ field: 'channel', reason: 'a render proof authenticates embedded_field captures only' }]);
    if (origin === undefined) {
      throw new DomainError('origin_not_allowed', 'A form capture is posted by the browser from one of the application\'s allowed origins; this request has no Origin header');
    }
    const issues: FieldIssue[] = [];
    if (body.render_proof !== undefined) issues.push({ field: 'render_proof', reason: 'only with channel embedded_field (the consent field)' });
    if (body.rendering_evidence !== undefined) issues.push({ field: 'rendering_evidence', reason: 'only with channel embedded_field (the consent field)' });
    if (issues.length > 0) throw validationFailed(issues);
    return undefined;
  }

  @Post('api/v1/decisions/:capture_token/authorize')
  @HttpCode(200)
  @AcceptCredentials('api_token')
  // Committing makes a record, as POST /api/v1/consent_records does.
  @RequireScopes('records:write')
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Commit a capture: binds the person by e-mail, freezes the receipt, fires the webhooks',
    description:
      "Send it to the person's home country, whichever country's endpoint made the capture: that country commits a capture another country holds " +
      '(only the capture\'s contents cross the border, never the person). Elsewhere it is 421 `wrong_country` naming the home country, or, for a person ' +
      'no country knows yet, the country holding the capture. A capture is committed in one country only; committed again for the same person it answers ' +
      'the same record (at the holding country, a capture its person\'s home committed answers 421 naming that home). ' +
      'Any API token of the capture\'s application\'s account may commit it; for another account\'s token it does not exist (404).',
  })
  @ApiOkResponse({ type: CaptureAuthorizedDto, description: '`{status, record_id, channel}`: the record' })
  @ApiConflict('The capture was committed for another person (`details` on `subject`)')
  @ApiWrongCountry("The person (or, for a person no country knows, the capture)")
  @ApiResponse({ status: 410, description: 'The capture expired uncommitted (`gone`)', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  @ApiResponse({ status: 503, description: 'Another country is committing the capture at this moment and has not finished within about 3 s (`service_unavailable`): try again', schema: { $ref: getSchemaPath(ErrorBodyDto) } })
  async authorize(@CurrentPrincipal() principal: Principal, @Param('capture_token') token: string, @Body() body: AuthorizeCaptureDto): Promise<AuthorizeCaptureReply> {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Commit captures with an API token of the application');
    if (!CAPTURE_TOKEN.test(token)) throw notFound('Capture');
    const holder = token.slice(4, 6).toUpperCase();
    const { COUNTRY, PEER_COUNTRIES } = this.context.env;
    if (holder !== COUNTRY && !PEER_COUNTRIES.includes(holder)) throw notFound('Capture');
    // The capture's application, when it is one of the token's account (AccountApplications; the holding country says whose a capture held there is).
    const applicationId =
      holder === COUNTRY ? await this.accounts.applicationFor(principal, 'capture', token) : await this.accounts.applicationIn(principal, holder, 'capture', token);
    try {
      return await firstValueFrom(
        this.clients.own.send<AuthorizeCaptureReply>(CAPTURES_AUTHORIZE, {
          application_id: applicationId,
          capture_token: token,
          subject: body.subject,
          suppress_receipt: body.suppress_receipt,
        }),
      );
    } catch (error) {
      // A capture held in another country for a person not homed here: a wrong door only if the
      // capture is there for an application of the token's account.
      if (holder !== COUNTRY && error instanceof DomainError && error.code === 'wrong_country' && !(await this.homeCountry.existsIn(holder, 'capture', token, audienceOf(principal)))) {
        throw notFound('Capture');
      }
      throw error;
    }
  }
}
