import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsExternalId, IsSubjectEmail } from '../residency/subject-fields';
import { Type } from 'class-transformer';
import { IsEmail, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateBy, ValidateNested } from 'class-validator';
import { displayTextProblem, DisplayTextRule, isKnownCurrency } from '@dcr/domain';

export class DecisionSubjectDto {
  @ApiPropertyOptional({
    example: 'ada@example.com',
    maxLength: 254,
    description: 'Only this person may sign in and decide. At most 254 characters, and at most 64 bytes (UTF-8) before the @ (an address over either is a 422 naming the limit)',
  })
  @IsOptional()
  @IsSubjectEmail()
  email?: string;

  @ApiPropertyOptional({
    example: 'customer-42',
    pattern: '\\S',
    description: "The organisation's own id for the person, by the Record API's rule: up to 200 characters without the spaces around it (which are not kept), no control characters; one of spaces only is refused",
  })
  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

/** Text the person reads before deciding, by displayTextProblem's rule (no bidirectional or control characters, not blank). */
const IsDisplayText = (rule: DisplayTextRule = {}) =>
  ValidateBy({
    name: 'isDisplayText',
    validator: {
      validate: (value: unknown) => displayTextProblem(value, rule) === undefined,
      defaultMessage: (args) => `${args?.property} ${displayTextProblem(args?.value, rule) ?? 'is not valid'}`,
    },
  });

export class ApprovalValueDto {
  @ApiProperty({ example: 125000, description: 'Integer minor units (cents), at most 9007199254740991 (larger integers lose digits in JSON)' })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER, { message: `amount must be at most ${Number.MAX_SAFE_INTEGER} minor units` })
  amount: number;

  @ApiProperty({ example: 'EUR', description: 'An ISO 4217 code (a made-up one such as XYZ is refused)' })
  @ValidateBy({ name: 'isKnownCurrency', validator: { validate: (value: unknown) => isKnownCurrency(value) } }, { message: 'currency must be an ISO 4217 code such as EUR' })
  currency: string;
}

export class ApprovalDto {
  @ApiProperty({ example: 'Pay invoice 2026-117', description: 'Shown to the person: no bidirectional or control characters, not blank' })
  @IsString()
  @Length(1, 200)
  @IsDisplayText()
  title: string;

  @ApiPropertyOptional({ description: 'Shown to the person: no bidirectional or control characters but tabs and line breaks' })
  @IsOptional()
  @IsString()
  @Length(0, 2000)
  @IsDisplayText({ multiline: true, blankAllowed: true })
  description?: string;

  @ApiProperty({ example: 'payments.create', description: 'Shown to the person: no bidirectional or control characters, not blank' })
  @IsString()
  @Length(1, 200)
  @IsDisplayText()
  action: string;

  @ApiPropertyOptional({ type: ApprovalValueDto })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => ApprovalValueDto)
  value?: ApprovalValueDto;

  @ApiProperty({ enum: ['scope', 'action', 'value', 'time', 'escalation', 'reputation'], description: 'Which authority bound made the agent ask' })
  @IsIn(['scope', 'action', 'value', 'time', 'escalation', 'reputation'])
  trigger: string;

  @ApiPropertyOptional({ example: 'agent_invoice_bot' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsDisplayText()
  agent_id?: string;
}

export class CreateDecisionDto {
  @ApiProperty({ enum: ['consent', 'approval', 'signature_request'], description: '`signature_request` is not built yet: 501 `not_implemented`' })
  @IsIn(['consent', 'approval', 'signature_request'])
  kind: 'consent' | 'approval' | 'signature_request';

  @ApiPropertyOptional({ example: 'flw_dev_0123456789abcdef', description: 'Required for consent; optional for approval' })
  @IsOptional()
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id?: string;

  @ApiPropertyOptional({ example: 'tp_dev_0123456789abcdef', description: "Defaults to the credential's own application" })
  @IsOptional()
  @Matches(/^tp_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'application_id must be a tp_ id' })
  application_id?: string;

  @ApiPropertyOptional({ enum: ['embed', 'popup', 'redirect', 'direct'], default: 'direct' })
  @IsOptional()
  @IsIn(['embed', 'popup', 'redirect', 'direct'])
  delivery_mode?: 'embed' | 'popup' | 'redirect' | 'direct';

  @ApiPropertyOptional({ example: 'http://localhost:8080', description: "The host page's origin (embed, popup); must be an allowed origin" })
  @IsOptional()
  @IsString()
  embed_origin?: string;

  @ApiPropertyOptional({ example: 'https://example.com/done', description: 'Redirect mode: where the person lands; its origin must be an allowed origin' })
  @IsOptional()
  @IsString()
  redirect_uri?: string;

  @ApiPropertyOptional({ type: DecisionSubjectDto })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => DecisionSubjectDto)
  subject?: DecisionSubjectDto;

  @ApiPropertyOptional({ format: 'date-time', description: 'Past it the session expires (at most 30 days ahead)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  deadline_at?: string;

  @ApiPropertyOptional({ type: ApprovalDto, description: 'Required for approval' })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => ApprovalDto)
  approval?: ApprovalDto;

  @ApiPropertyOptional({ example: 'de', description: "The page's language; defaults to the flow's locale" })
  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/, { message: 'locale must be a language tag such as en or de-DE' })
  locale?: string;
}

/** The deprecated family's body: a consent session for a flow (delivery mode `embed` by default). */
export class CreateConsentSessionDto extends OmitType(CreateDecisionDto, ['kind', 'flow_id', 'approval', 'application_id'] as const) {
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;
}

export class DecisionCreatedDto {
  @ApiProperty({
    example: 'dcs_0123456789abcdefghij',
    description: "The session's public id: what its events, webhooks and audit entries name (the token, the participant's credential, is in none of them)",
  })
  session_id: string;
  @ApiProperty({ example: 'dts_us0123456789abcdefghijklmnopqrst', description: "The participant's credential (the decision page's capability): give it only to the person; kept by the service only as a hash" })
  session_token: string;
  @ApiProperty({ example: 'http://127.0.0.1:3001/decisions/dts_…' }) decision_url: string;
  @ApiProperty({ example: 'http://127.0.0.1:3001/decisions/dts_…/embed' }) embed_url: string;
  @ApiProperty({ enum: ['consent', 'approval'] }) kind: string;
  @ApiProperty({ example: 'pending' }) status: string;
  @ApiProperty({ enum: ['embed', 'popup', 'redirect', 'direct'] }) delivery_mode: string;
  @ApiProperty({ nullable: true, type: String }) flow_id: string | null;
  @ApiProperty({ nullable: true, type: Number }) flow_version: number | null;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) deadline_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class TransitionDto {
  @ApiProperty({ enum: ['authenticating', 'verifying', 'reviewing', 'informed', 'evidenced', 'revoked'], description: 'Only a legal next state' })
  @IsString()
  to: string;

  @ApiPropertyOptional({ description: 'With to=verifying: the address the code was mailed to' })
  @IsOptional()
  @IsEmail()
  email?: string;

  @ApiPropertyOptional({ description: 'With to=verifying: the one-time code' })
  @IsOptional()
  @IsString()
  @Length(1, 16)
  code?: string;
}

export class SignInDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsEmail()
  email: string;

  @ApiPropertyOptional({ example: 'de', description: "The language the page is shown in: the code's mail is written in it (English or German; else the session's language)" })
  @IsOptional()
  @Matches(/^[a-z]{2}(-[A-Z]{2})?$/, { message: 'locale must be a language tag such as en or de-DE' })
  locale?: string;
}

export class ProofDto {
  @ApiProperty({ example: 'ada@example.com', description: 'The address that signed in to the session' })
  @IsEmail()
  email: string;

  @ApiProperty({ description: 'The one-time code mailed to it (POST …/sign_in)' })
  @IsString()
  @Length(1, 16)
  code: string;
}

/** A counter-proposal to an approval: what the person would approve instead, in words and, when it is an amount, the amount. */
export class CounterDto {
  @ApiPropertyOptional({ example: 'Half now, half next month', description: 'Shown to the organisation as written: at most 2,000 characters, no bidirectional or control characters but tabs and line breaks' })
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  @IsDisplayText({ multiline: true })
  note?: string;

  @ApiPropertyOptional({ type: ApprovalValueDto, description: 'The amount the person would approve instead' })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => ApprovalValueDto)
  value?: ApprovalValueDto;
}

export class CompleteDto {
  @ApiProperty({ description: 'consent: granted | declined (also denied); approval: approved | denied | countered (also approve, deny, counter, declined)' })
  @IsString()
  outcome: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'boolean' }, description: 'Consent: per purpose key, true to grant (or, for a legitimate interest, false to object)' })
  @IsOptional()
  @IsObject()
  purposes?: Record<string, boolean>;

  @ApiPropertyOptional({ type: CounterDto, description: 'Approval countered: the counter-proposal, {note?, value?} (a note of at most 2,000 characters, an amount as an approval takes it); any other field is refused by name' })
  @IsOptional()
  @ValidateNested()
  @IsObject()
  @Type(() => CounterDto)
  counter?: CounterDto;
}

export class CancelDto {
  @ApiPropertyOptional({ example: 'user_closed' })
  @IsOptional()
  @IsString()
  @Length(0, 200)
  reason?: string;

  @ApiPropertyOptional({ enum: ['user', 'host'], default: 'user' })
  @IsOptional()
  @IsIn(['user', 'host'])
  cancelled_by?: 'user' | 'host';
}

export class FrameEventDto {
  @ApiProperty({ enum: ['postmessage_dropped'] })
  @IsIn(['postmessage_dropped'])
  type: 'postmessage_dropped';

  @ApiProperty({ enum: ['origin_missing'] })
  @IsIn(['origin_missing'])
  reason: 'origin_missing';

  @ApiPropertyOptional({ default: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  count?: number;
}

export class ExchangeDto {
  @ApiProperty({ description: 'The exchange_token of the completion message (the consent token)' })
  @IsString()
  @Length(1, 200)
  exchange_token: string;
}

export class VerifyQueryDto {
  @ApiProperty({ description: 'The consent token from the completion message' })
  @IsString()
  @Length(1, 200)
  consent_token: string;
}

export class VerifyDto {
  @ApiProperty() valid: boolean;
  @ApiProperty({ example: 'fulfilled', description: 'fulfilled on the first check of a granted decision; expired for a replay, an old or an unknown token; revoked after a withdrawal' })
  status: string;
  @ApiPropertyOptional({ example: 'granted' }) outcome?: string;
}

export class ExchangeResultDto {
  @ApiProperty() status: string;
  @ApiProperty() outcome: string;
  @ApiProperty({ example: 'rec_0123456789abcdefghij' }) record_id: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    required: ['subject'],
    properties: {
      subject: {
        oneOf: [
          { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', example: 'sub_us0123456789abcdefgh' }, email: { type: 'string', description: 'Once the person signed in' } } },
          { type: 'null' },
        ],
        description: 'The person, or null when the session named none (as its webhook events say it)',
      },
    },
    description:
      '`{session_id, kind, outcome, flow_id, flow_version, purposes?, purpose_statuses?, approval?, counter?, subject, completed_at}`; ' +
      '`purposes`: `{key: true}` for each consent purpose granted, false for every other; `purpose_statuses`: each purpose\'s status ' +
      '(`granted`, `declined`, `objected`, `noticed`), as the record and its webhook give it',
  })
  claims: Record<string, unknown>;
  @ApiProperty({ type: 'array', items: { type: 'object' } }) attestations: unknown[];
  @ApiProperty({ type: 'array', items: { type: 'object' } }) credentials: unknown[];
}

