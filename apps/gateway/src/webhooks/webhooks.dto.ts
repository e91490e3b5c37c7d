import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WEBHOOK_EVENT_TYPES } from '@dcr/domain';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, Length } from 'class-validator';

export class CreateWebhookDto {
  @ApiProperty({ example: 'https://example.com/hooks/decisions', description: 'HTTPS (production); sandbox applications may also use http://127.0.0.1 or http://localhost' })
  @IsString()
  @Length(1, 2048)
  url: string;

  @ApiProperty({
    example: ['consent.granted', 'consent.revoked'],
    enum: WEBHOOK_EVENT_TYPES,
    isArray: true,
    description: 'Event types to deliver (see docs/webhooks.md); `consent.modified` and `approval.approved` are reserved names nothing emits; any other is a 422 on `events`',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @IsString({ each: true })
  events: string[];
}

export class WebhookDto {
  @ApiProperty({ example: 'whk_0123456789abcdefghij' }) id: string;
  @ApiProperty() url: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true }) events: string[];
  @ApiProperty({ enum: ['enabled', 'disabled'] }) status: string;
  @ApiProperty({ description: 'Failed deliveries in a row (test deliveries excluded); five disable the subscription' }) consecutive_failures: number;
  @ApiProperty({ nullable: true, type: String }) disabled_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class WebhookWithSecretDto extends WebhookDto {
  @ApiProperty({ example: 'whsec_…', description: 'Shown once. The HMAC key is its UTF-8 bytes.' }) secret: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'After a rotation: until when the secret before it signs every delivery beside the new one (24 hours)' })
  previous_secret_expires_at?: string;
}

export class WebhookAttemptDto {
  @ApiProperty() attempt: number;
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty() duration_ms: number;
  @ApiProperty({ nullable: true, type: Number }) response_status: number | null;
  @ApiProperty({ nullable: true, type: String, description: 'The first 1 KiB of the answer' }) response_excerpt: string | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) next_attempt_at: string | null;
}

export class WebhookRequestDto {
  @ApiProperty() url: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Headers of the last attempt' }) headers: Record<string, string>;
  @ApiProperty({ description: 'The exact body sent and signed' }) body: string;
}

export class WebhookDeliveryDto {
  @ApiProperty({ example: 'whd_0123456789abcdefghij' }) id: string;
  @ApiProperty() subscription_id: string;
  @ApiProperty({ description: 'X-Service-Event-ID: the same on every attempt and replay' }) event_id: string;
  @ApiProperty({ example: 'consent.granted' }) event_type: string;
  @ApiProperty({ enum: ['pending', 'delivering', 'succeeded', 'failed'] }) status: string;
  @ApiProperty() test: boolean;
  @ApiProperty({ nullable: true, type: String }) replay_of: string | null;
  @ApiProperty() attempts: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' }) completed_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Why it failed without being sent: its subscription was disabled when the event happened (replay it once enabled), or disabled or deleted before a retry was due; null otherwise',
  })
  failure_reason: string | null;
  @ApiProperty({ type: WebhookRequestDto }) request: WebhookRequestDto;
  @ApiProperty({ type: [WebhookAttemptDto] }) attempt_log: WebhookAttemptDto[];
}
