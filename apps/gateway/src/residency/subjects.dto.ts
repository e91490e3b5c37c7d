import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsExternalId, IsSubjectEmail } from './subject-fields';

const EMAIL_DESCRIPTION = 'At most 254 characters, and at most 64 bytes (UTF-8) before the @ (an address over either is a 422 naming the limit); compared lower-cased, as the Record API compares it';
const EXTERNAL_ID_DESCRIPTION =
  "The organisation's own id for the person, by the Record API's rule: up to 200 characters without the spaces around it (which are not kept), no control characters; one of spaces only is refused";

export class CreateSubjectDto {
  @ApiPropertyOptional({ example: 'ada@example.com', maxLength: 254, description: EMAIL_DESCRIPTION })
  @IsOptional()
  @IsSubjectEmail()
  email?: string;

  @ApiPropertyOptional({
    example: 'crm-4711',
    pattern: '\\S',
    description:
      `${EXTERNAL_ID_DESCRIPTION}. With \`email\`: both must name the same person, one recorded by the other alone (who is given it, as the Record API gives it), or a new one; ` +
      'an external id of another person, or another one than the person of the address has, is a 422 on `external_id`',
  })
  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class FindSubjectQueryDto {
  @ApiPropertyOptional({ maxLength: 254, description: EMAIL_DESCRIPTION })
  @IsOptional()
  @IsSubjectEmail()
  email?: string;

  @ApiPropertyOptional({ pattern: '\\S', description: EXTERNAL_ID_DESCRIPTION })
  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class SubjectDto {
  @ApiProperty({ example: 'sub_us0123456789abcdefgh', description: 'Opaque; made in the home country, whose code it starts with' }) id: string;
  @ApiProperty() application_id: string;
  @ApiProperty({ example: 'US', description: 'The country that holds this person’s data' }) home_country: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
  @ApiProperty({ nullable: true, type: String }) external_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
