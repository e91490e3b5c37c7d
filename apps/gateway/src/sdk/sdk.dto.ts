import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';

export class ClientScriptFileDto {
  @ApiProperty({ example: 'service.js' }) name: string;
  @ApiProperty({ example: ['https://api.example.com/sdk/v1/service.js', 'https://api.example.com/js/v1/service.js'], description: 'The same bytes under both folders' })
  urls: string[];
  @ApiProperty({ example: 'sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC', description: 'For `<script type="module" integrity=…>` and `<link rel="modulepreload" integrity=…>`' })
  integrity: string;
  @ApiProperty({ example: 12781 }) bytes: number;
  @ApiProperty({ example: 3442, description: 'Size as sent to clients that accept gzip' }) gzip_bytes: number;
  @ApiProperty({ example: ['service-frame.js'], description: 'Sibling modules it imports (relative, served beside it)' }) imports: string[];
}

export class ClientScriptModuleDto {
  @ApiProperty() url: string;
  @ApiProperty() integrity: string;
}

export class ClientScriptEntryDto {
  @ApiProperty({ example: 'https://api.example.com/sdk/v1/service.js' }) url: string;
  @ApiProperty({ type: [ClientScriptModuleDto], description: 'Every module the entry loads (itself first), each with its integrity: preload them with integrity to pin all of them' })
  loads: ClientScriptModuleDto[];
}

export class ClientScriptManifestDto {
  @ApiProperty({ example: 'v1' }) version: string;
  @ApiProperty({
    description: '`service.js` (core), `service-field.js` (the consent field entry) and `service-decision.js` (the service-decision element)',
    additionalProperties: { $ref: '#/components/schemas/ClientScriptEntryDto' },
  })
  entry_points: Record<string, ClientScriptEntryDto>;
  @ApiProperty({ type: [ClientScriptFileDto] }) files: ClientScriptFileDto[];
}

export class PurposeWordingDto {
  @ApiProperty({ example: 'Monthly newsletter', description: 'The published label; captures attest its SHA-256' }) label: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ example: 'consent' }) basis: string;
  @ApiProperty({ example: 'explicit' }) mechanism: string;
  @ApiProperty() required: boolean;
  @ApiProperty({ description: 'The person decides on it (consent, or an objection to a legitimate interest)' }) takes_decision: boolean;
}

export class FlowWordingDto {
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty({ example: 2, description: 'The active version the wording belongs to' }) version: number;
  @ApiProperty({ example: 'en' }) locale: string;
  @ApiPropertyOptional({ type: String, nullable: true }) title: string | null;
  @ApiProperty({ description: 'Purpose key → its published wording, in the flow’s order', additionalProperties: { $ref: '#/components/schemas/PurposeWordingDto' } })
  purposes: Record<string, PurposeWordingDto>;
}

export class PreviewTemplateDto {
  @ApiPropertyOptional({ enum: ['desktop', 'mobile'], default: 'desktop' })
  @IsOptional()
  @IsIn(['desktop', 'mobile'])
  device?: 'desktop' | 'mobile';

  @ApiPropertyOptional({ enum: ['light', 'dark'], default: 'light' })
  @IsOptional()
  @IsIn(['light', 'dark'])
  theme?: 'light' | 'dark';
}

export class CreateTemplateDto {
  @ApiPropertyOptional({
    example: 2,
    description: 'The version of the flow to preview: a draft, the active version or a superseded one. The newest version (a pending draft included) when absent.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  flow_version?: number;
}

export class TemplateDto {
  @ApiProperty({ example: 'tpl_us0123456789abcdefghij', description: '`tpl_` + the country that keeps it + 20 characters; another country answers 421' })
  id: string;
  @ApiProperty({ example: 'flw_dev_0123456789abcdef' }) flow_id: string;
  @ApiProperty({ example: 2 }) flow_version: number;
  @ApiProperty({ example: '2025-03-02T08:14:02.000Z' }) created_at: string;
}

export class TemplatePreviewLinkDto {
  @ApiProperty({
    example: 'https://us.decisions.example.com/preview/tpl_us0123456789abcdefghij.dl.1740903842.kPq7yF3rJ0m2bT1c8wZ9uXhN4sVdA6eLgR5oQiHtYjE',
    description:
      'The flow host’s preview page, `<flow host>/preview/<signed token>`; `?device=desktop|mobile` and `?theme=light|dark` override what was asked here. ' +
      'Frame it from the service’s own origin only (`frame-ancestors \'self\'`).',
  })
  preview_url: string;
  @ApiProperty({ example: '2025-03-02T08:24:02.000Z', description: 'The link works for 10 minutes' })
  expires_at: string;
}
