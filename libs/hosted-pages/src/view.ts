/** Shapes the gateway receives from the participant API (`GET /api/v1/decisions/<token>`). */
import type { DecisionKind, DecisionStatus } from '@dcr/domain';

export { DECISION_STATUSES, TERMINAL_STATUSES } from '@dcr/domain';
export type { DecisionKind, DecisionStatus } from '@dcr/domain';

export type DeliveryMode = 'embed' | 'popup' | 'redirect' | 'direct';
export type DecisionOutcome = 'granted' | 'declined' | 'approved' | 'denied' | 'countered';
export type PurposeBasis = 'consent' | 'legitimate_interest' | 'contract' | 'legal_obligation' | 'vital_interest' | 'public_task';

export interface ParticipantPurpose {
  key: string;
  label: string;
  description?: string | null;
  basis: PurposeBasis | string;
  mechanism?: 'explicit' | 'informed' | 'opt_out' | string | null;
  required?: boolean;
  /** True when the person decides on it (consent, or objection to a legitimate interest). */
  takes_decision: boolean;
}

export interface ParticipantDataField {
  key: string;
  label: string;
  required?: boolean;
  /** Special-category or otherwise sensitive data (shown as such). */
  sensitive?: boolean;
}

/**
 * Retention or revocation policy: free text, an ISO 8601 duration, or a structured object kept as the
 * flow gave it (`description`/`text`/`summary` and `duration` are shown, else its plain values).
 */
export type FlowPolicy = string | Record<string, unknown> | null;

export interface ParticipantFlow {
  id: string;
  version: number;
  pattern: 'standard' | 'informed' | string;
  title?: string | null;
  name: string;
  description?: string | null;
  policy_url?: string | null;
  locale?: string | null;
  /** ISO 8601 duration such as `P1Y`. */
  consent_duration?: string | null;
  retention?: FlowPolicy;
  revocation_policy?: FlowPolicy;
  data_fields: ParticipantDataField[];
  steps?: unknown[];
  purposes: ParticipantPurpose[];
}

export interface ParticipantApproval {
  title: string;
  description?: string | null;
  action: string;
  /** `amount` in minor units of `currency` (ISO 4217). */
  value?: { amount: number; currency: string } | null;
  trigger: 'scope' | 'action' | 'value' | 'time' | 'escalation' | 'reputation' | string;
  agent_id?: string | null;
}

export interface ParticipantView {
  /** `dts_…` */
  session_token: string;
  kind: DecisionKind;
  status: DecisionStatus;
  path: 'standard' | 'informed';
  delivery_mode: DeliveryMode;
  /** Target origin for postMessage; null when the application has none configured. */
  embed_origin: string | null;
  redirect_uri: string | null;
  deadline_at: string | null;
  expires_at: string;
  locale: string;
  /** Server time (ISO 8601), for the countdown's clock-skew correction. */
  now: string;
  application: { id: string; name: string };
  allowed_transitions: string[];
  signed_in: { email_hint: string } | null;
  outcome: DecisionOutcome | null;
  flow: ParticipantFlow | null;
  approval: ParticipantApproval | null;
}

/** One row of the unified inbox. */
export interface InboxItem {
  session_token: string;
  kind: DecisionKind;
  title: string;
  application?: { id?: string; name: string } | null;
  /** Used when `application` is absent. */
  application_name?: string | null;
  deadline_at?: string | null;
  /** When the request expires: shown as its deadline when it has none of its own. */
  expires_at?: string | null;
  created_at?: string | null;
  /** Approvals: scope, action, value, time, escalation or reputation. */
  trigger?: string | null;
  status?: DecisionStatus;
}
