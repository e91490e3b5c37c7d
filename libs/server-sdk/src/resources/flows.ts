import { ApiRequester, RequestOptions, route, WithResponse } from '../requester';
import { ListParams, Page } from './common';

export type PurposeBasis = 'consent' | 'legitimate_interest' | 'contract' | 'legal_obligation' | 'vital_interest' | 'public_task';

/** consent: `explicit` (default) or `informed`; legitimate_interest: `opt_out` (right to object); other bases: `notice`. */
export type PurposeMechanism = 'explicit' | 'informed' | 'opt_out' | 'notice';

export interface PurposeDefinition {
  /** Shown to the person; defaults to the key. */
  label?: string;
  description?: string | null;
  /** Default `consent`. */
  basis?: PurposeBasis;
  mechanism?: PurposeMechanism;
  /** Only notice-only purposes can be required. */
  required?: boolean;
}

export interface DataField {
  key: string;
  label?: string;
  required?: boolean;
  sensitive?: boolean;
}

/** The terms of a flow (`POST /api/v1/applications/<id>/flows`). */
export interface FlowTerms {
  name: string;
  /** standard: sign in, verify, review; informed: disclosures, evidence. */
  pattern: 'standard' | 'informed';
  /** Purpose keys; a key without a definition is an explicit consent purpose labelled by its key. */
  purposes: string[];
  purpose_definitions?: Record<string, PurposeDefinition>;
  locale?: string;
  title?: string;
  description?: string;
  policy_url?: string;
  jurisdiction?: string;
  /** ISO 8601 duration, for example `P1Y`; a flow needs one to be capturable. */
  consent_duration?: string;
  retention?: string | Record<string, unknown>;
  revocation_policy?: string | Record<string, unknown>;
  data_fields?: Array<string | DataField>;
  steps?: Array<{ type: string; [key: string]: unknown }>;
}

/** A purpose as a flow answers it, every field resolved. */
export interface Purpose {
  label: string;
  description: string | null;
  basis: PurposeBasis;
  mechanism: PurposeMechanism;
  required: boolean;
  /** Whether the person decides on it (consent, or an objection to a legitimate interest). */
  takes_decision: boolean;
}

export type FlowStatus = 'draft' | 'active' | 'superseded';

export interface Flow extends Omit<FlowTerms, 'purpose_definitions'> {
  /** `flw_<region>_<16>`; the same for every version. */
  id: string;
  application_id: string;
  version: number;
  status: FlowStatus;
  purpose_definitions: Record<string, Purpose>;
  /** Decision-only with a consent duration: it can be recorded through the Record API and captured in your own form. */
  capturable: boolean;
  capturable_reasons: string[];
  terms_fingerprint: string;
  /** This version's notice fingerprint: send it as a consent record's `notice_digest` (wording matched). */
  notice_digest: string;
  hosted_url: string;
  created_at: string;
  updated_at: string;
  activated_at: string | null;
  superseded_at: string | null;
}

/**
 * Flows: consent templates, authored once and readable in every country. A draft changes; activation
 * freezes the terms; a new version supersedes the old one for new decisions.
 */
export class Flows {
  constructor(private readonly requester: ApiRequester) {}

  /** A draft, version 1. Every problem with the terms comes back in one `InvalidRequestError` (422) naming the fields. */
  async create(applicationId: string, terms: FlowTerms, options?: RequestOptions): Promise<WithResponse<Flow>> {
    return this.requester.send<Flow>({ method: 'POST', path: route`/api/v1/applications/${applicationId}/flows`, body: terms }, options);
  }

  /** The application's flows, newest first, each at its newest version. */
  async list(applicationId: string, params: ListParams = {}, options?: RequestOptions): Promise<WithResponse<Page<Flow>>> {
    return this.requester.send<Page<Flow>>({ method: 'GET', path: route`/api/v1/applications/${applicationId}/flows`, query: { ...params } }, options);
  }

  /** The newest version, or `{version}`. */
  async get(flowId: string, params: { version?: number | undefined } = {}, options?: RequestOptions): Promise<WithResponse<Flow>> {
    return this.requester.send<Flow>({ method: 'GET', path: route`/api/v1/flows/${flowId}`, query: { ...params } }, options);
  }

  /** Changes a draft; an active flow raises `ConflictError`: publish a new version instead. */
  async update(flowId: string, changes: Partial<FlowTerms>, options?: RequestOptions): Promise<WithResponse<Flow>> {
    return this.requester.send<Flow>({ method: 'PATCH', path: route`/api/v1/flows/${flowId}`, body: changes }, options);
  }

  /** Activates the newest draft (fires `flow.activated`); activating an active flow changes nothing. */
  async activate(flowId: string, options?: RequestOptions): Promise<WithResponse<Flow>> {
    return this.requester.send<Flow>({ method: 'POST', path: route`/api/v1/flows/${flowId}/activate` }, options);
  }

  /** A new draft version with the changes merged onto the newest version; `ConflictError` while a draft is pending or when nothing changed. */
  async createVersion(flowId: string, changes: Partial<FlowTerms>, options?: RequestOptions): Promise<WithResponse<Flow>> {
    return this.requester.send<Flow>({ method: 'POST', path: route`/api/v1/flows/${flowId}/versions`, body: changes }, options);
  }
}
