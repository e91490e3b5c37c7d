import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TemplateCreateRequest, TemplateDeleteRequest, TemplateGetRequest, TemplateMessage } from '@dcr/contracts';
import { newTemplateId, notFound, validationFailed } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { Repository } from 'typeorm';
import { FlowsRepository } from '../flows/flows.repository';
import { PreviewTemplate } from './preview-template.entity';

export function templateMessage(row: PreviewTemplate): TemplateMessage {
  return {
    id: row.id,
    application_id: row.applicationId,
    flow_id: row.flowId,
    flow_version: row.flowVersion,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * Preview templates of an application's flows. A template names an existing version of a flow of the
 * same application; it is created, read and deleted, never changed (a new version is a new template).
 */
@Injectable()
export class PreviewTemplatesService {
  constructor(
    @InjectRepository(PreviewTemplate) private readonly templates: Repository<PreviewTemplate>,
    private readonly flows: FlowsRepository,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  async create(request: TemplateCreateRequest): Promise<TemplateMessage> {
    const newest = await this.flows.latest(request.flow_id);
    if (!newest || newest.applicationId !== request.application_id) throw notFound('Flow');
    let version = newest.version;
    if (request.flow_version !== undefined) {
      const wanted = await this.flows.version(request.flow_id, request.flow_version);
      if (!wanted) {
        throw validationFailed([
          { field: 'flow_version', reason: `the flow ${request.flow_id} has no version ${request.flow_version} (its versions are 1 to ${newest.version})` },
        ]);
      }
      version = wanted.version;
    }
    const row = Object.assign(new PreviewTemplate(), {
      id: newTemplateId(this.context.env.COUNTRY),
      applicationId: request.application_id,
      flowId: request.flow_id,
      flowVersion: version,
      createdAt: new Date(),
    });
    await this.templates.insert(row);
    return templateMessage(row);
  }

  async get(request: TemplateGetRequest): Promise<TemplateMessage> {
    const row = await this.templates.findOne({ where: { id: request.id } });
    if (!row) throw notFound('Template');
    return templateMessage(row);
  }

  async remove(request: TemplateDeleteRequest): Promise<void> {
    const result = await this.templates.delete({ id: request.id, applicationId: request.application_id });
    if (!result.affected) throw notFound('Template');
  }
}
