import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class PurposeDefinitionDto {
  @ApiPropertyOptional({ example: 'Newsletter', description: 'Shown to the person; defaults to the key' }) label?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description?: string | null;
  @ApiPropertyOptional({ enum: ['consent', 'legitimate_interest', 'contract', 'legal_obligation', 'vital_interest', 'public_task'], default: 'consent' })
  basis?: string;
  @ApiPropertyOptional({
    enum: ['explicit', 'informed', 'opt_out', 'notice'],
    description: 'consent: explicit (default) or informed; legitimate_interest: opt_out (right to object); other bases: notice (notice-only)',
  })
  mechanism?: string;
  @ApiPropertyOptional({ description: 'Only notice-only purposes can be required: consent is never a condition, and an objection is always possible' })
  required?: boolean;
}

export class DataFieldDto {
  @ApiProperty({ example: 'email' }) key: string;
  @ApiPropertyOptional() label?: string;
  @ApiPropertyOptional() required?: boolean;
  @ApiPropertyOptional() sensitive?: boolean;
}

/**
 * The terms of a flow. Validated as a whole by the decisions service; every problem comes back in
 * one 422 whose `details` name the fields (`purposes[1]`, `purpose_definitions.ads.basis`, …).
 */
export class FlowTermsDto {
  @ApiProperty({ example: 'Newsletter sign-up', maxLength: 200 }) name: string;
  @ApiProperty({ enum: ['standard', 'informed'], description: 'standard: sign in, verify, review; informed: disclosures, evidence' }) pattern: string;
  @ApiProperty({ type: [String], example: ['newsletter', 'analytics'], description: 'Purpose keys; a key without a definition is an explicit consent purpose labelled by its key' })
  purposes: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/PurposeDefinitionDto' } })
  purpose_definitions?: Record<string, PurposeDefinitionDto>;
  @ApiPropertyOptional({ example: 'en', description: 'BCP 47; the hosted pages speak en and de' }) locale?: string;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'null (in an answer) when not given' }) title?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'null (in an answer) when not given' }) description?: string | null;
  @ApiPropertyOptional({ example: 'https://example.com/privacy', nullable: true, type: String, description: 'https (http only for localhost); null (in an answer) when not given' }) policy_url?: string | null;
  @ApiPropertyOptional({ example: 'EU', nullable: true, type: String, description: 'null (in an answer) when not given' }) jurisdiction?: string | null;
  @ApiPropertyOptional({ example: 'P1Y', nullable: true, type: String, description: 'ISO 8601 duration; a flow needs one to be capturable; null (in an answer) when not given' }) consent_duration?: string | null;
  @ApiPropertyOptional({ description: 'Free text or a JSON object, kept as given; null (in an answer) when not given', oneOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }] }) retention?: unknown;
  @ApiPropertyOptional({ description: 'Free text or a JSON object, kept as given; null (in an answer) when not given', oneOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }] }) revocation_policy?: unknown;
  @ApiPropertyOptional({ type: [DataFieldDto], description: 'Strings or objects' }) data_fields?: DataFieldDto[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', properties: { type: { type: 'string' } } } }) steps?: Array<{ type: string }>;
}

export class PurposeDto {
  @ApiProperty() label: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty() basis: string;
  @ApiProperty() mechanism: string;
  @ApiProperty() required: boolean;
  @ApiProperty({ description: 'Whether the person decides on it (consent, or an objection to a legitimate interest)' }) takes_decision: boolean;
}

export class FlowDto extends FlowTermsDto {
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) id: string;
  @ApiProperty({ example: 'tp_dev_0123456789abcdef' }) application_id: string;
  @ApiProperty({ example: 1 }) version: number;
  @ApiProperty({ enum: ['draft', 'active', 'superseded'] }) status: string;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/PurposeDto' } })
  declare purpose_definitions: Record<string, PurposeDto>;
  @ApiProperty({ description: 'Decision-only and declares a consent duration: it can be captured in the organisation\'s own form' }) capturable: boolean;
  @ApiProperty({ type: [String], description: 'Why it cannot be captured, when it cannot' }) capturable_reasons: string[];
  @ApiProperty({ description: 'sha256 of the canonical JSON of the terms; any drift changes it' }) terms_fingerprint: string;
  @ApiProperty({
    description:
      "The fingerprint of this version's notice (the receipts' privacy_notice.hash). A Record API call that sends it as notice_digest records the wording as matched (extensions.wording_drift), any other digest as drifted; never refused",
  })
  notice_digest: string;
  @ApiProperty({ example: 'http://127.0.0.1:3001/accord/flw_dev_0123456789abcdef', description: 'The hosted flow page (active flows only)' }) hosted_url: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) activated_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) superseded_at: string | null;
}
