import { Body, Controller, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DomainError } from '@dcr/domain';
import { AcceptCredentials } from '../auth/auth.decorators';
import { ApiErrorResponses, ErrorBodyDto } from '../openapi/openapi.decorators';
import { PreviewTemplateDto } from './sdk.dto';

const TEMPLATE_ID = /^tpl_[A-Za-z0-9_-]{1,64}$/;

/**
 * Template previews (the client script's previewTemplate, internal tooling with the API key). The
 * service has no setup templates (tpl_…) yet, so the route answers 501 after checking its input: a
 * client learns that, not a 404.
 */
@ApiTags('Templates')
@ApiBearerAuth()
@ApiErrorResponses()
@AcceptCredentials('api_token', 'admin')
@Controller()
export class TemplatePreviewsController {
  @Post('api/v1/templates/:template_id/preview')
  @ApiOperation({
    summary: 'Not implemented yet (501): a preview of a setup template',
    description: 'Will answer `{preview_url}` on the flow host for the client script’s previewTemplate. There is no template store yet.',
  })
  @ApiResponse({ status: 501, description: 'Template previews are not available yet', type: ErrorBodyDto })
  preview(@Param('template_id') templateId: string, @Body() _body: PreviewTemplateDto): never {
    if (!TEMPLATE_ID.test(templateId)) {
      throw new DomainError('invalid_request', 'Invalid path parameters', [{ field: 'template_id', reason: 'must be a template id (tpl_…)' }]);
    }
    throw new DomainError('not_implemented', 'Template previews are not available yet: the service has no setup templates (tpl_…) to preview');
  }
}
