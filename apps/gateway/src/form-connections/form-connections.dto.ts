import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { PERSONAL_ACCESS_TOKEN } from '@dcr/contracts';

export class FormPurposeMappingDto {
  @ApiProperty({ example: 'newsletter_q', description: 'The ref of a yes_no, legal or choice question (multiple_choice, dropdown, picture_choice)' })
  field: string;

  @ApiPropertyOptional({ example: 'newsletter_yes', description: 'Choice questions only: the ref of the choice that means yes' })
  choice?: string;
}

export class FormMappingDto {
  @ApiProperty({ example: 'email_q', description: 'The ref of the form\'s e-mail question (type email): it binds the person' })
  @IsString()
  @Length(1, 255)
  email: string;

  @ApiPropertyOptional({ example: 'crm_id', description: 'A hidden field carrying your own id for the person' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  external_id?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/FormPurposeMappingDto' },
    example: { newsletter: { field: 'newsletter_q' }, analytics: { field: 'tracking_q', choice: 'tracking_yes' }, fraud: { field: 'object_fraud_q' } },
    description:
      'Every purpose of the flow that takes a decision, keyed by purpose. A consent purpose is granted when its question is answered ' +
      'yes (yes_no, legal) or its choice is among those chosen; left unanswered it is declined. A right-to-object purpose\'s yes ' +
      'is an objection. Refused at saving (422 naming the purpose): a consent purpose on a required question; a rating, number, ' +
      'opinion scale, free-text or other question that cannot carry a decision; a choice question without the yes-choice ref, or ' +
      'with one that is not its choice; unknown and notice-only purposes; decision purposes left unmapped; one answer for two purposes; ' +
      'a field of a purpose\'s mapping other than `field` and `choice`.',
  })
  @IsObject()
  purposes: Record<string, FormPurposeMappingDto>;
}

const FORM_DEFINITION_DESCRIPTION =
  "The JSON Typeform's `GET https://api.typeform.com/forms/{form_id}` returns (questions, refs, `validations.required`, choices, " +
  'hidden fields): what the mapping is checked against. Without it, the form is fetched from Typeform with `personal_access_token`.';

export class CreateFormConnectionDto {
  @ApiProperty({ enum: ['typeform'], description: 'The hosted form builder (docs/form-builders.md)' })
  @IsIn(['typeform'])
  platform: 'typeform';

  @ApiProperty({ example: 'u6nXL7', description: 'The form id (the last part of https://<you>.typeform.com/to/u6nXL7)' })
  @Matches(/^[A-Za-z0-9]{1,64}$/, { message: 'form_id must be the form\'s id: letters and digits' })
  form_id: string;

  @ApiProperty({ example: 'flw_dev_0123456789abcdef', description: 'The active, capturable flow the form answers' })
  @Matches(/^flw_[a-z]{2,8}_[0-9a-z]{16}$/, { message: 'flow_id must be a flw_ id' })
  flow_id: string;

  @ApiPropertyOptional({ description: 'A Typeform personal access token with forms:read; kept encrypted, never shown again' })
  @IsOptional()
  @IsString()
  @Length(1, 512)
  @Matches(PERSONAL_ACCESS_TOKEN, { message: 'personal_access_token must be the token as Typeform shows it (tfp_…): letters, digits and - . _ ~ + /, no spaces' })
  personal_access_token?: string;

  @ApiProperty({ type: FormMappingDto })
  @ValidateNested()
  @IsObject()
  @Type(() => FormMappingDto)
  mapping: FormMappingDto;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: FORM_DEFINITION_DESCRIPTION })
  @IsOptional()
  @IsObject()
  form_definition?: Record<string, unknown>;
}

export class UpdateFormMappingDto {
  @ApiProperty({ type: FormMappingDto })
  @ValidateNested()
  @IsObject()
  @Type(() => FormMappingDto)
  mapping: FormMappingDto;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: `${FORM_DEFINITION_DESCRIPTION} Without either, the definition kept from the last save is used.`,
  })
  @IsOptional()
  @IsObject()
  form_definition?: Record<string, unknown>;
}

export class FormConnectionDto {
  @ApiProperty({ example: 'fcn_us0123456789abcdefghij', description: 'Starts with the code of the country that keeps it' }) id: string;
  @ApiProperty({ enum: ['typeform'] }) platform: string;
  @ApiProperty({ example: 'u6nXL7' }) form_id: string;
  @ApiProperty() flow_id: string;
  @ApiProperty({
    example: 'https://us.decisions.example.com/hooks/typeform/fcn_us0123456789abcdefghij',
    description: 'Set it as the form\'s webhook URL in Typeform, with the secret',
  })
  webhook_url: string;
  @ApiProperty({ type: FormMappingDto }) mapping: FormMappingDto;
  @ApiProperty({ description: 'Whether a personal access token is kept (it is never shown)' }) personal_access_token: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'Until when the secret before the last rotation is still honoured' })
  previous_secret_expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class FormConnectionWithSecretDto extends FormConnectionDto {
  @ApiProperty({ example: 'fcsec_…', description: 'Shown once. Paste it as the Typeform webhook\'s secret; it signs every delivery (Typeform-Signature).' })
  secret: string;
}

export class FormSubmissionAcceptedDto {
  @ApiProperty({ enum: [true] }) accepted: true;
  @ApiPropertyOptional({ enum: [true], description: 'The builder\'s test request: nothing was recorded' }) test?: true;
  @ApiPropertyOptional({ example: 'rec_us0123456789abcdefghij', description: 'The consent record (the same one on a redelivery)' }) record_id?: string;
}
