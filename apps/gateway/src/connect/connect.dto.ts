import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmptyObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';

export class CreateApplicationDto {
  @ApiProperty({ example: 'Acme newsletter', maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ enum: ['sandbox', 'production'] })
  @IsIn(['sandbox', 'production'])
  environment: 'sandbox' | 'production';

  @ApiPropertyOptional({
    example: 'dev',
    description: "The deployment's region (the `<region>` of `tp_<region>_…`); defaults to it and must equal it",
  })
  @IsOptional()
  @Matches(/^[a-z]{2,8}$/, { message: 'region must be 2 to 8 lower-case letters' })
  region?: string;
}

export class ApplicationSettingsDto {
  @ApiProperty({
    description:
      'Browser commit: a capture posted with `commit: true` is recorded in the same call, on the lower-assurance `<channel>_browser` channel. Needs at least one allowed origin.',
  })
  browser_commit: boolean;
}

export class ApplicationDto {
  @ApiProperty({ example: 'tp_dev_0123456789abcdef' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) environment: string;
  @ApiProperty({ example: 'dev' }) region: string;
  @ApiProperty({ example: 'acc_0123456789abcdef' }) account_id: string;
  @ApiProperty({ type: ApplicationSettingsDto }) settings: ApplicationSettingsDto;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class UpdateApplicationSettingsDto {
  @ApiPropertyOptional({ description: 'Turn browser commit on or off; on needs at least one allowed origin (422 otherwise)' })
  @IsOptional()
  @IsBoolean()
  browser_commit?: boolean;
}

export class CreateApiTokenDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({ type: [String], description: 'Defaults to every scope', example: ['audit:verify'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  scopes?: string[];
}

export class ApiTokenDto {
  @ApiProperty({ example: 'api_token_0123456789abcdef' }) id: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;
}

export class CreatedApiTokenDto extends ApiTokenDto {
  @ApiProperty({ description: 'The token value: shown once, stored only as a hash' }) token: string;
}

export class PublishableKeyDto {
  @ApiProperty({ example: 'pk_0123456789abcdef' }) id: string;
  @ApiProperty({ example: 'pk_test_AbC1', description: 'First characters of the key, to recognise it' })
  key_prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class CreatedPublishableKeyDto extends PublishableKeyDto {
  @ApiProperty({ example: 'pk_test_…', description: 'The key: shown once, stored only as a hash' }) key: string;
}

export class AllowedOriginInput {
  @ApiProperty({ example: 'https://shop.example', description: 'scheme://host[:port], no path, query or trailing slash' })
  @IsString()
  origin: string;
}

export class AddAllowedOriginDto {
  @ApiProperty({ type: AllowedOriginInput })
  @IsNotEmptyObject()
  @ValidateNested()
  @Type(() => AllowedOriginInput)
  allowed_origin: AllowedOriginInput;
}

export class AllowedOriginDto {
  @ApiProperty({ example: 'https://shop.example' }) origin: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class AllowedOriginEnvelopeDto {
  @ApiProperty({ type: AllowedOriginDto }) allowed_origin: AllowedOriginDto;
}

export class ListQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @IsString()
  limit?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  cursor?: string;
}
