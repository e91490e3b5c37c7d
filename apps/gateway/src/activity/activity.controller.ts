import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { parseLimit } from '@dcr/domain';
import { IsOptional, IsString, Matches } from 'class-validator';
import { AcceptCredentials } from '../auth/auth.decorators';
import { ApiErrorResponses } from '../openapi/openapi.decorators';
import { ActivityRecorder } from './activity.recorder';

class ActivityQueryDto {
  @ApiPropertyOptional({ example: 'cors.preflight_denied' })
  @IsOptional()
  @Matches(/^[a-z_]+\.[a-z_]+$/)
  type?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @IsString()
  limit?: string;
}

/**
 * The edge's activity feed for operators (admin token): events with no application to scope them
 * to, such as preflights from origins no application registered.
 */
@ApiTags('Operations')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('admin')
@Controller('api/v1/activity')
export class ActivityController {
  constructor(private readonly activity: ActivityRecorder) {}

  @Get()
  @ApiOperation({ summary: 'Recent activity events of this country’s gateway, newest first (admin token)' })
  async list(@Query() query: ActivityQueryDto) {
    const events = await this.activity.list(query.type, parseLimit(query.limit));
    return {
      data: events.map((e) => ({ id: e.id, type: e.type, application_id: e.applicationId, detail: e.detail, occurred_at: e.occurredAt.toISOString() })),
      next_cursor: null,
    };
  }
}
