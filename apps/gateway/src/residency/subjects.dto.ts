import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Length } from 'class-validator';

export class CreateSubjectDto {
  @ApiPropertyOptional({ example: 'ada@example.com' })
  @IsOptional()
  @IsEmail()
  email?: string;

  @ApiPropertyOptional({ example: 'crm-4711', description: "The organisation's own identifier of the person" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  external_id?: string;
}

export class FindSubjectQueryDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsEmail()
  email?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 200)
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
