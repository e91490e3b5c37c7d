import { Body, Controller, Headers, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { AuthorizeCaptureReply, CAPTURE_TOKEN, CAPTURES_AUTHORIZE, CAPTURES_CREATE, CaptureCreatedReply } from '@dcr/contracts';
import { DomainError, notFound, validationFailed, wrongCountry } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext } from '@dcr/service-kit';
import { firstValueFrom } from 'rxjs';
import { AcceptCredentials, CurrentPrincipal } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../openapi/openapi.decorators';
import { RecordSubjectDto } from './records.dto';

export class CreateCaptureDto {
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;

  @ApiProperty({ enum: ['form_capture', 'embedded_field'] })
  @IsIn(['form_capture', 'embedded_field'])
  channel: 'form_capture' | 'embedded_field';

  @ApiProperty({ description: 'Purpose key → {decision, default_checked, mandatory}: the state of each control, nothing else', example: { newsletter: { decision: 'granted', default_checked: false, mandatory: false } } })
  @IsObject()
  decisions: Record<string, { decision: string; default_checked?: boolean; mandatory?: boolean }>;

  @ApiPropertyOptional({ description: 'Purpose key → SHA-256 (hex) of the label text shown; compared with the published wording (match/drift, recorded, never refused)' })
  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @ApiPropertyOptional({ description: 'The consent field element\'s render proof (kept, verified with the element)' })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  render_proof?: string;

  @ApiPropertyOptional({
    description:
      'Browser commit: record at once, on the lower-assurance `<channel>_browser` channel, and answer `record_id` and `channel` too. Only when the application has browser commit on (`PATCH /api/v1/applications/<id>/settings`), otherwise 422; needs `subject.email`. The receipt e-mail is sent.',
  })
  @IsOptional()
  @IsBoolean()
  commit?: boolean;

  @ApiPropertyOptional({ type: RecordSubjectDto, description: 'The person, only with `commit: true`' })
  @IsOptional()
  @ValidateNested()
  @Type(() => RecordSubjectDto)
  subject?: RecordSubjectDto;
}

export class AuthorizeCaptureDto {
  @ApiProperty({ type: RecordSubjectDto })
  @ValidateNested()
  @Type(() => RecordSubjectDto)
  subject: RecordSubjectDto;

  @ApiPropertyOptional({ description: 'true: no receipt e-mail' })
  @IsOptional()
  @IsBoolean()
  suppress_receipt?: boolean;
}

/**
 * Consent inside the organisation's own form: the browser posts a capture with the publishable key
 * (from an allowed origin), the organisation's server commits it with the person's e-mail.
 */
@ApiTags('Consent records')
@ApiErrorResponses()
@Controller()
export class CapturesController {
  constructor(
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  @Post('api/v1/captures')
  @AcceptCredentials('publishable_key')
  @ApiSecurity('publishable_key')
  @ApiOperation({ summary: 'Capture the consent controls of a form (publishable key, allowed origin); answers a capture token held 24 hours' })
  @ApiCreatedResponse({ description: '`{capture_token, expires_at, wording_verdict?}`; with browser commit also `{record_id, channel}`' })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateCaptureDto, @Headers('origin') origin?: string): Promise<CaptureCreatedReply> {
    if (principal.kind !== 'publishable_key') throw new DomainError('forbidden', 'Captures are made with the publishable key');
    if (body.commit && !principal.application.browserCommit) {
      throw validationFailed([{ field: 'commit', reason: 'browser commit is not enabled for this application; commit from your server with authorize' }]);
    }
    if (body.commit && !body.subject) throw validationFailed([{ field: 'subject.email', reason: 'browser commit binds the person by e-mail' }]);
    if (!body.commit && body.subject) throw validationFailed([{ field: 'subject', reason: 'only with commit: true; otherwise your server gives the person when it authorizes' }]);
    return firstValueFrom(
      this.clients.own.send<CaptureCreatedReply>(CAPTURES_CREATE, {
        application_id: principal.application.id,
        flow_id: body.flow_id,
        channel: body.channel,
        decisions: body.decisions,
        labels: body.labels,
        render_proof: body.render_proof,
        origin,
        ...(body.commit ? { commit: { subject: body.subject } } : {}),
      }),
    );
  }

  @Post('api/v1/decisions/:capture_token/authorize')
  @HttpCode(200)
  @AcceptCredentials('api_token')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Commit a capture: binds the person by e-mail, freezes the receipt, fires the webhooks' })
  @ApiOkResponse({ description: '`{status, record_id, channel}`' })
  authorize(@CurrentPrincipal() principal: Principal, @Param('capture_token') token: string, @Body() body: AuthorizeCaptureDto): Promise<AuthorizeCaptureReply> {
    if (principal.kind !== 'api_token') throw new DomainError('forbidden', 'Commit captures with an API token of the application');
    if (!CAPTURE_TOKEN.test(token)) throw notFound('Capture');
    const home = token.slice(4, 6).toUpperCase();
    if (home !== this.context.env.COUNTRY) throw wrongCountry(home);
    return firstValueFrom(
      this.clients.own.send<AuthorizeCaptureReply>(CAPTURES_AUTHORIZE, {
        application_id: principal.application.id,
        capture_token: token,
        subject: body.subject,
        suppress_receipt: body.suppress_receipt,
      }),
    );
  }
}
