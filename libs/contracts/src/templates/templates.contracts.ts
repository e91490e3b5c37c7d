import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { APPLICATION_ID, FLOW_ID } from '../patterns';

/**
 * decisions: preview templates (`tpl_<cc>…`), handles on one flow version (draft or active) that an
 * organisation's tooling previews as a person would see the decision page, without a session. They
 * live beside the flow versions they name, in the country whose endpoint created them. The gateway
 * checks the caller's access to the application; the decisions service checks the flow and version.
 */
export const TEMPLATES_CREATE = 'decisions.templates.create';
export const TEMPLATES_GET = 'decisions.templates.get';
export const TEMPLATES_DELETE = 'decisions.templates.delete';

export const TEMPLATE_ID = /^tpl_[a-z]{2}[0-9a-z]{20}$/;

export class TemplateCreateRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(FLOW_ID)
  flow_id: string;

  /** A given version of the flow (draft, active or superseded); the newest version when absent. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  flow_version?: number;
}

/** Reads a template by id alone: the gateway learns its application from the answer and checks access. */
export class TemplateGetRequest {
  @Matches(TEMPLATE_ID)
  id: string;
}

export class TemplateDeleteRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(TEMPLATE_ID)
  id: string;
}

export interface TemplateMessage {
  id: string;
  application_id: string;
  flow_id: string;
  flow_version: number;
  created_at: string;
}
