import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  TEMPLATES_CREATE,
  TEMPLATES_DELETE,
  TEMPLATES_GET,
  TemplateCreateRequest,
  TemplateDeleteRequest,
  TemplateGetRequest,
  TemplateMessage,
} from '@dcr/contracts';
import { PreviewTemplatesService } from './preview-templates.service';

@Controller()
export class PreviewTemplatesController {
  constructor(private readonly templates: PreviewTemplatesService) {}

  @MessagePattern(TEMPLATES_CREATE)
  create(@Payload() request: TemplateCreateRequest): Promise<TemplateMessage> {
    return this.templates.create(request);
  }

  @MessagePattern(TEMPLATES_GET)
  get(@Payload() request: TemplateGetRequest): Promise<TemplateMessage> {
    return this.templates.get(request);
  }

  @MessagePattern(TEMPLATES_DELETE)
  async remove(@Payload() request: TemplateDeleteRequest): Promise<{ deleted: true }> {
    await this.templates.remove(request);
    return { deleted: true };
  }
}
