/*
 * The receipt (`service-cr/2.13`) as TypeScript types. They mirror
 * `schemas/receipt/v2/record.json`; the closed enumerations are exported as arrays so code and tests
 * can compare them with the schema.
 */

export const RECORD_TYPES = ['consent_record', 'notice_record', 'authorization_record'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export const PARTY_ROLES = ['controller', 'processor', 'supervisory_authority', 'recipient', 'principal', 'agent'] as const;
export type PartyRole = (typeof PARTY_ROLES)[number];

export const PARTY_TYPES = ['organization', 'natural_person', 'software_agent'] as const;
export type PartyType = (typeof PARTY_TYPES)[number];

export const PARTY_PROVENANCES = ['display_name', 'declared'] as const;
export type PartyProvenance = (typeof PARTY_PROVENANCES)[number];

export const LAWFUL_BASES = ['consent', 'legitimate_interest', 'contract', 'legal_obligation', 'vital_interest', 'public_task'] as const;
export type LawfulBasis = (typeof LAWFUL_BASES)[number];

export const RECEIPT_PURPOSE_MECHANISMS = ['explicit', 'informed', 'opt_out', 'notice'] as const;
export type ReceiptPurposeMechanism = (typeof RECEIPT_PURPOSE_MECHANISMS)[number];

/** Consent and notice records use these states. */
export const CONSENT_EVENT_STATES = [
  'notice shown',
  'notice acknowledged',
  'consent requested',
  'consent given',
  'consent refused',
  'consent withdrawn',
  'consent expired',
  'objection recorded',
] as const;

/** Authorization records use these states. */
export const AUTHORIZATION_EVENT_STATES = [
  'authority requested',
  'authority granted',
  'authority exercised',
  'authority suspended',
  'authority resumed',
  'authority revoked',
  'authority expired',
  'approval requested',
  'approval granted',
  'approval denied',
  'approval countered',
] as const;

/** The 19 receipt event states (spec "Receipt event states"). */
export const RECEIPT_EVENT_STATES = [...CONSENT_EVENT_STATES, ...AUTHORIZATION_EVENT_STATES] as const;
export type EventState = (typeof RECEIPT_EVENT_STATES)[number];

export const RECEIPT_EVENT_TYPES = ['explicit', 'implicit', 'regular'] as const;
export type EventType = (typeof RECEIPT_EVENT_TYPES)[number];

/**
 * Where a withdrawal or objection was made from: the person's own records, the management link in
 * their e-mail, the link in their receipt, the organisation's mailing tool, a newer record from the
 * organisation's form, the organisation or its systems, the end of the term, the platform's subject
 * sweep, and `unspecified` for changes whose evidence predates the channel.
 */
export const RECEIPT_EVENT_CHANNELS = [
  'own_records',
  'email_link',
  'receipt_link',
  'mailing_tool',
  'newer_record',
  'organisation',
  'end_of_term',
  'subject_sweep',
  'unspecified',
] as const;
export type EventChannel = (typeof RECEIPT_EVENT_CHANNELS)[number];

export const COLLECTION_CHANNELS = [
  'hosted',
  'embedded',
  'embedded_field',
  'embedded_field_browser',
  'form_capture',
  'form_capture_browser',
  'form_platform_webhook',
  'controller_attested',
  'imported',
] as const;
export type CollectionChannel = (typeof COLLECTION_CHANNELS)[number];

/** Channels whose control the service rendered (the only ones it attests rendering for). */
export const SERVICE_RENDERED_CHANNELS: readonly CollectionChannel[] = ['hosted', 'embedded', 'embedded_field', 'embedded_field_browser'];

/** Receipt delivery modes (a session's `direct` mode is written `link`). */
export const RECEIPT_DELIVERY_MODES = ['redirect', 'embed', 'popup', 'link'] as const;
export type ReceiptDeliveryMode = (typeof RECEIPT_DELIVERY_MODES)[number];

export type WordingVerdict = 'match' | 'drift';

/** `record`: who and what the receipt is about. Exactly one of `anonymous` / `pii_principal_id`. */
export interface ReceiptRecord {
  schema_version: 'service-cr/2.13';
  conforms_to: 'ISO/IEC TS 27560:2023';
  record_id: string;
  /** Absent on older records, read as `consent_record`. */
  record_type?: RecordType;
  /** Only ever `true`; the record then carries no `pii_principal_id`. */
  anonymous?: true;
  pii_principal_id?: string;
}

export interface PrivacyNotice {
  reference?: string;
  hash?: string;
  url?: string;
}

/** One granted purpose, with its decision-time label frozen. */
export interface ReceiptPurpose {
  purpose_id: string;
  /** The label as presented. */
  purpose: string;
  purpose_description?: string;
  lawful_basis: LawfulBasis;
  mechanism?: ReceiptPurposeMechanism;
}

export interface PrivacyRights {
  access: string;
  export?: string;
}

export interface PiiProcessing {
  language: string;
  jurisdiction: string;
  privacy_notice?: PrivacyNotice;
  collection_method?: string;
  purposes: ReceiptPurpose[];
  storage_locations?: string[];
  processing_locations?: string[];
  withdrawal_method?: string;
  /** `[]` asserts nothing is shared; absent means the recipients cannot be enumerated completely. */
  recipient_third_parties?: string[];
  privacy_rights?: PrivacyRights;
  processing_method?: string[];
  impact_assessment?: string;
}

export interface Party {
  party_id: string;
  party_name: string;
  party_role: PartyRole;
  party_type?: PartyType;
  provenance?: PartyProvenance;
  party_address?: string;
  party_email?: string;
  party_phone?: string;
  party_url?: string;
}

/** One enforced bound dimension; inner structure not fixed by the specification. */
export type AuthorityBound = Record<string, unknown>;

export interface Authority {
  scope_bounds?: AuthorityBound;
  action_bounds?: AuthorityBound;
  value_bounds?: AuthorityBound;
  time_bounds?: AuthorityBound;
  escalation_bounds?: AuthorityBound;
  reputation_bounds?: AuthorityBound;
  jurisdiction_bounds?: AuthorityBound;
  sequence_bounds?: AuthorityBound;
  valid_from?: string;
  valid_until?: string;
  cooling_off?: string;
  withdrawal_method: string;
}

export interface ReceiptEvent {
  event_time: string;
  /** Only on `consent given`. */
  validity_duration?: string;
  entity_id: string;
  event_type: EventType;
  event_state: EventState;
  /**
   * Only on a scoped `consent withdrawn`, and always on `objection recorded` (an objection is to one
   * purpose; frozen with the decision it names a purpose `pii_processing.purposes` does not list).
   */
  purpose_id?: string;
  /** Only on `consent given`: the predecessor record it supersedes. */
  record_reference?: string;
  /** Only on `authority exercised`. */
  occurrences?: number;
  /** Only on authority and approval rows. */
  approval_id?: string;
  /** Only on appended `consent withdrawn` / `objection recorded` rows. */
  event_channel?: EventChannel;
}

/** An evidence entry whose inner structure the specification does not fix. */
export type EvidenceEntry = Record<string, unknown>;

export interface ReceiptExtensions {
  collection_mechanism?: string;
  delivery_mode?: ReceiptDeliveryMode;
  scopes?: string[];
  sensitive?: boolean;
  consent_flow_id?: string;
  grant_integrity?: { content_hash: string; key_versions: string[] };
  delegation_chain_root?: string;
  capability_manifest?: { hash: string; reference?: string; version?: number; url?: string };
  accountability_record?: string;
  agent_disclosures?: EvidenceEntry[];
  signature_evidence?: EvidenceEntry[];
  collection_channel?: CollectionChannel;
  collection_platform?: string;
  wording_drift?: Record<string, WordingVerdict>;
  captured_at?: string;
  recorded_at?: string;
  presentation_attested?: string[];
  rendering_evidence?: EvidenceEntry[];
}

/** A receipt as read (what `GET /api/v1/consent_receipts/<record_id>` answers, canonical flavor). */
export interface Receipt {
  $schema: string;
  record: ReceiptRecord;
  pii_processing?: PiiProcessing;
  party_identification: Party[];
  authority?: Authority;
  event: ReceiptEvent[];
  extensions?: ReceiptExtensions;
}
