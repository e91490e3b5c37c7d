import { Type } from 'class-transformer';
import {
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { APPLICATION_ID, FLOW_ID } from '../patterns';
import { SnapshotPartReply, SnapshotPartRequest } from '../snapshot-parts';

/**
 * decisions: flows, the reusable consent templates. A flow is configuration, not personal data:
 * it is authored in one country and replicated whole to every other, so a session can be opened
 * for it at any country's endpoint.
 */
export const FLOWS_CREATE = 'decisions.flows.create';
export const FLOWS_GET = 'decisions.flows.get';
export const FLOWS_LIST = 'decisions.flows.list';
export const FLOWS_UPDATE = 'decisions.flows.update';
export const FLOWS_ACTIVATE = 'decisions.flows.activate';
export const FLOWS_NEW_VERSION = 'decisions.flows.new-version';
/** decisions → peer countries' decisions: every version of one flow after a change. */
export const FLOWS_CHANGED = 'decisions.flows.changed';
/** Request for every flow a country authored; asked of each peer at start. */
export const FLOWS_SNAPSHOT = 'decisions.flows.snapshot';

export const FLOW_STATUSES = ['draft', 'active', 'superseded'] as const;
export type FlowStatus = (typeof FLOW_STATUSES)[number];

export class CreateFlowRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  /** The body as the organisation sent it; the decisions service normalises and validates it. */
  @IsObject()
  terms: Record<string, unknown>;
}

export class GetFlowRequest {
  @Matches(FLOW_ID)
  flow_id: string;

  /** A given version; the newest one when absent. */
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number;

  /** The newest active version (what new sessions use) instead of the newest version. */
  @IsOptional()
  @IsIn([true, false])
  active?: boolean;
}

export class ListFlowsRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsInt()
  @Min(1)
  @Max(200)
  limit: number;

  @IsOptional()
  @IsString()
  cursor?: string;
}

export class UpdateFlowRequest {
  @Matches(FLOW_ID)
  flow_id: string;

  /** Fields to change; the others keep their value. */
  @IsObject()
  changes: Record<string, unknown>;
}

export class FlowIdRequest {
  @Matches(FLOW_ID)
  flow_id: string;
}

/** One version of a flow as every service and the API see it. */
export interface FlowMessage {
  id: string;
  application_id: string;
  version: number;
  status: FlowStatus;
  /** The normalised terms (see `normaliseFlowTerms` in @dcr/domain). */
  terms: Record<string, unknown>;
  terms_fingerprint: string;
  /** The fingerprint of the version's notice (the receipts' privacy_notice.hash): what a Record API call's notice_digest is compared with. */
  notice_digest: string;
  capturable: boolean;
  capturable_reasons: string[];
  authored_in: string;
  created_at: string;
  updated_at: string;
  activated_at: string | null;
  superseded_at: string | null;
}

export interface FlowPage {
  data: FlowMessage[];
  next_cursor: string | null;
}

/** A replicated flow version, as stored by the authoring country. */
export class FlowVersionSnapshot {
  @Matches(FLOW_ID)
  id: string;

  @Matches(APPLICATION_ID)
  application_id: string;

  @IsInt()
  @Min(1)
  version: number;

  @IsIn(FLOW_STATUSES as unknown as string[])
  status: FlowStatus;

  @IsObject()
  terms: Record<string, unknown>;

  @Matches(/^[0-9a-f]{64}$/)
  terms_fingerprint: string;

  @Matches(/^[A-Z]{2}$/)
  authored_in: string;

  /** Grows on every change of this version; a replica keeps the highest. */
  @IsInt()
  @Min(1)
  revision: number;

  @IsISO8601({ strict: true })
  created_at: string;

  @IsISO8601({ strict: true })
  updated_at: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  activated_at: string | null;

  @IsOptional()
  @IsISO8601({ strict: true })
  superseded_at: string | null;
}

export class FlowChangedEvent {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => FlowVersionSnapshot)
  versions: FlowVersionSnapshot[];
}

export class FlowsSnapshotRequest extends SnapshotPartRequest {}

export interface FlowsSnapshotReply extends SnapshotPartReply {
  versions: FlowVersionSnapshot[];
}
