import { ConsentOutcome, FlowTerms, isCountryCode, PurposeStatus } from '@dcr/domain';
import {
  assertValidReceipt,
  COLLECTION_CHANNELS,
  CollectionChannel,
  EvidenceEntry,
  Party,
  PartyType,
  PiiProcessing,
  RECEIPT_CONFORMS_TO,
  RECEIPT_SCHEMA_VERSION,
  ReceiptDeliveryMode,
  ReceiptEvent,
  ReceiptExtensions,
  ReceiptPurpose,
  ReceiptRecord,
  receiptSchemaUrl,
  RecordType,
  SERVICE_RENDERED_CHANNELS,
  WordingVerdict,
} from '../schema';
import { collectionMethodText } from './collection-method';
import { GrantedPurpose, grantedPurposes } from './granted-purposes';
import { NoticeMemo, noticeContentOf, privacyNotice, uriOfUrl } from './notice';
import { jsonCopy } from './json-copy';
import { ReceiptInputIssues } from './receipt-input-error';

/*
 * The decision-time part of a receipt, built once when a decision is committed and stored as JSON.
 * Reads project it (projectReceipt) by appending post-decision events; nothing here is ever rewritten.
 *
 * Absence is meaningful: every optional field is left out when the input does not state it, and every
 * time comes from the input's evidence (nothing is stamped with the clock here).
 */

/** Identity data an organisation declared about itself or a recipient (never verified). */
export interface DeclaredIdentity {
  /** Declared legal name; when absent the display name is used (provenance `display_name`). */
  legalName?: string;
  partyType?: PartyType;
  address?: string;
  email?: string;
  phone?: string;
  url?: string;
}

/** A recipient the application declared. Persons are never emitted as recipients. */
export interface DeclaredRecipient {
  /** Stable public party id, listed in `pii_processing.recipient_third_parties`. */
  id: string;
  /** Declared legal name. */
  name: string;
  partyType?: Exclude<PartyType, 'natural_person'>;
  address?: string;
  email?: string;
  phone?: string;
  url?: string;
}

/** An organisation the platform knows from configuration or its catalogue (processor, authority). */
export interface ConfiguredParty {
  id: string;
  name: string;
  url?: string;
  email?: string;
  phone?: string;
  address?: string;
}

/** A session's delivery mode; `direct` is written `link` on the receipt. */
export type DecisionDeliveryMode = 'embed' | 'popup' | 'redirect' | 'direct' | 'link';

export interface FrozenReceiptInput {
  /** The committed record's id (`record.record_id`; stands in for an anonymous principal). */
  recordId: string;

  /** The flow version the decision answered: its public id and its (immutable) terms. */
  flow: { id: string; terms: FlowTerms };

  /** The principal: the opaque person id, or anonymous when no identity was established. */
  subject: { id: string } | { anonymous: true };

  decision: {
    /** The completion outcome. */
    outcome: ConsentOutcome;
    /** Per-purpose statuses as recorded (`decidePurposes`, a capture's or a record's decisions). */
    purposeStatuses?: Readonly<Record<string, PurposeStatus>>;
    /** Only these purposes were presented (a consent field rendering a subset); default all. */
    presentedPurposes?: readonly string[];
    /**
     * The purposes whose presentation the organisation stated (default_checked and mandatory), for
     * `presentation_attested`; when absent (events before it was kept), every purpose the record
     * holds a decision for.
     */
    presentationStated?: readonly string[];
    /** Locale the decision was presented in; default the flow's locale. */
    locale?: string;
    channel: CollectionChannel;
    /** The session's delivery mode; absent for captures, records and imports. */
    deliveryMode?: DecisionDeliveryMode;
    /** When the notice was shown, if the platform observed it (`notice shown`). */
    noticeShownAt?: string;
    /** The session's `created_at` (`consent requested`); absent when there was no session. */
    requestedAt?: string;
    /**
     * When the decision was made: the session's `completed_at`, or for captures, records and imports
     * the organisation's `captured_at` (`consent given` / `notice acknowledged`, `extensions.captured_at`;
     * the consent duration counts from it).
     */
    decidedAt: string;
    /** When the service committed the record (`extensions.recorded_at`). */
    recordedAt: string;
    /** The predecessor record this one re-affirms (`record_reference` on `consent given`). */
    supersedes?: string;
  };

  /** The controller: the application, its display name, what it declared, and its recipients. */
  application: {
    id: string;
    name: string;
    declared?: DeclaredIdentity;
    /** Absent: the recipients cannot be enumerated; `[]`: nothing is shared. */
    recipients?: readonly DeclaredRecipient[];
  };

  /** The subject's home country (ISO 3166-1 alpha-2), where the record is stored. */
  storageCountry: string;
  /** The platform processor, from configuration. */
  processor: ConfiguredParty;
  /** The supervisory authority, when catalogued for the jurisdiction. */
  supervisoryAuthority?: ConfiguredParty;

  /**
   * Stable, credential-free withdrawal entry point (never a minted token). Left out of an anonymous
   * record's receipt: the entry finds a person's records by their signed-in e-mail address, and an
   * anonymous record has no person to find, so it could not say truthfully that it withdraws this one.
   */
  withdrawalUrl?: string;
  /** Where the subject exercises rights (access; export for full accounts). */
  privacyRights?: { access: string; export?: string };
  /** Destination jurisdictions of recorded lawful transfers; absent when none are recorded. */
  processingLocations?: readonly string[];
  /** References of the active legitimate-interest assessments for this flow. */
  legitimateInterestAssessments?: readonly string[];

  /** Further evidence, each written only when stated. */
  evidence?: {
    scopes?: readonly string[];
    sensitive?: boolean;
    /** Hosted form builder (only with channel `form_platform_webhook`). */
    collectionPlatform?: string;
    /** Per purpose key: whether the attested label wording matched the published wording. */
    wordingVerdict?: Readonly<Record<string, WordingVerdict>>;
    /** Only with channels `embedded_field` and `embedded_field_browser`. */
    renderingEvidence?: readonly EvidenceEntry[];
    agentDisclosures?: readonly EvidenceEntry[];
    /** Consent records only. */
    signatureEvidence?: readonly EvidenceEntry[];
  };
}

/** The decision-time part of a receipt, stored as JSON at commit; everything but `$schema`. */
export interface FrozenReceipt {
  record: ReceiptRecord;
  pii_processing: PiiProcessing;
  party_identification: Party[];
  event: ReceiptEvent[];
  extensions: ReceiptExtensions;
}

const RECORD_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const RENDERING_CHANNELS: readonly CollectionChannel[] = ['embedded_field', 'embedded_field_browser'];

/** A placeholder `$schema` for checking a frozen part on its own (the real one is set at read). */
const CHECK_SCHEMA_URL = receiptSchemaUrl('https://schemas.decision-service.dev');

function receiptDeliveryMode(mode: DecisionDeliveryMode): ReceiptDeliveryMode {
  return mode === 'direct' ? 'link' : mode;
}

function receiptPurpose(purpose: GrantedPurpose): ReceiptPurpose {
  return {
    purpose_id: purpose.key,
    purpose: purpose.label,
    ...(purpose.description !== null && { purpose_description: purpose.description }),
    lawful_basis: purpose.basis,
    mechanism: purpose.mechanism,
  };
}

function controllerParty(application: FrozenReceiptInput['application']): Party {
  const declared = application.declared ?? {};
  return {
    party_id: application.id,
    party_name: declared.legalName ?? application.name,
    party_role: 'controller',
    ...(declared.partyType !== undefined && { party_type: declared.partyType }),
    provenance: declared.legalName !== undefined ? 'declared' : 'display_name',
    ...(declared.address !== undefined && { party_address: declared.address }),
    ...(declared.email !== undefined && { party_email: declared.email }),
    ...(declared.phone !== undefined && { party_phone: declared.phone }),
    ...(declared.url !== undefined && { party_url: declared.url }),
  };
}

/** A party from configuration or the catalogue; its URL as an RFC 3986 URI (configuration takes any https URL). */
function configuredParty(party: ConfiguredParty, role: 'processor' | 'supervisory_authority'): Party {
  const url = party.url !== undefined ? uriOfUrl(party.url) : undefined;
  return {
    party_id: party.id,
    party_name: party.name,
    party_role: role,
    party_type: 'organization',
    ...(party.address !== undefined && { party_address: party.address }),
    ...(party.email !== undefined && { party_email: party.email }),
    ...(party.phone !== undefined && { party_phone: party.phone }),
    ...(url !== undefined && { party_url: url }),
  };
}

function recipientParty(recipient: DeclaredRecipient): Party {
  return {
    party_id: recipient.id,
    party_name: recipient.name,
    party_role: 'recipient',
    ...(recipient.partyType !== undefined && { party_type: recipient.partyType }),
    provenance: 'declared',
    ...(recipient.address !== undefined && { party_address: recipient.address }),
    ...(recipient.email !== undefined && { party_email: recipient.email }),
    ...(recipient.phone !== undefined && { party_phone: recipient.phone }),
    ...(recipient.url !== undefined && { party_url: recipient.url }),
  };
}

function checkInput(input: FrozenReceiptInput, issues: ReceiptInputIssues): void {
  if (typeof input.recordId !== 'string' || !RECORD_ID.test(input.recordId)) {
    issues.add('recordId', 'must be 1 to 128 letters, digits, _ . : or -, starting with a letter or digit');
  }
  if ('id' in input.subject && (typeof input.subject.id !== 'string' || input.subject.id.length === 0)) {
    issues.add('subject.id', 'must be a non-empty string');
  }
  const { decision } = input;
  if (!COLLECTION_CHANNELS.includes(decision.channel)) issues.add('decision.channel', `must be one of ${COLLECTION_CHANNELS.join(', ')}`);
  for (const field of ['noticeShownAt', 'requestedAt'] as const) {
    if (decision[field] !== undefined) issues.time(`decision.${field}`, decision[field]);
  }
  issues.time('decision.decidedAt', decision.decidedAt);
  issues.time('decision.recordedAt', decision.recordedAt);
  if (!isCountryCode(input.storageCountry)) issues.add('storageCountry', 'must be an ISO 3166-1 alpha-2 code such as US or DE');

  const taken = new Set([input.application.id, input.processor.id, input.supervisoryAuthority?.id]);
  const recipientIds = new Set<string>();
  (input.application.recipients ?? []).forEach((recipient, index) => {
    const at = `application.recipients[${index}]`;
    if ((recipient.partyType as PartyType | undefined) === 'natural_person') {
      issues.add(`${at}.partyType`, 'a natural person is never emitted as a recipient');
    }
    if (taken.has(recipient.id) || recipientIds.has(recipient.id)) issues.add(`${at}.id`, `duplicates the party id ${recipient.id}`);
    recipientIds.add(recipient.id);
  });

  const evidence = input.evidence ?? {};
  if (evidence.renderingEvidence !== undefined && !RENDERING_CHANNELS.includes(decision.channel)) {
    issues.add('evidence.renderingEvidence', 'is recorded only for the embedded_field and embedded_field_browser channels');
  }
  if (evidence.collectionPlatform !== undefined && decision.channel !== 'form_platform_webhook') {
    issues.add('evidence.collectionPlatform', 'is recorded only for the form_platform_webhook channel');
  }
}

/** Consent record when something was granted; otherwise the person was given notice only. */
function recordTypeOf(granted: readonly GrantedPurpose[]): RecordType {
  return granted.length > 0 ? 'consent_record' : 'notice_record';
}

/**
 * The purposes the person objected to, in flow order: a presented right-to-object (legitimate
 * interest) purpose recorded `objected`. grantedPurposes has checked the statuses fit their purposes.
 */
function objectedPurposes(input: FrozenReceiptInput): string[] {
  const statuses = input.decision.purposeStatuses ?? {};
  const presented = input.decision.presentedPurposes ? new Set(input.decision.presentedPurposes) : undefined;
  return input.flow.terms.purposes
    .filter((purpose) => (!presented || presented.has(purpose.key)) && purpose.basis === 'legitimate_interest' && statuses[purpose.key] === 'objected')
    .map((purpose) => purpose.key);
}

/**
 * `extensions.presentation_attested`: on a channel whose control the service did not render (the
 * organisation's own form, a form builder, the Record API, an import), how each purpose taking a
 * decision was presented (shown ticked by default, mandatory) is the organisation's word, never
 * observed: those purposes, in flow order, that the record holds a decision for. Undefined on the
 * service's own pages and consent field (it rendered the control), and when there is none.
 */
function presentationAttestedOf(input: FrozenReceiptInput): string[] | undefined {
  const { decision } = input;
  if (SERVICE_RENDERED_CHANNELS.includes(decision.channel)) return undefined;
  const statuses = decision.purposeStatuses ?? {};
  const presented = decision.presentedPurposes ? new Set(decision.presentedPurposes) : undefined;
  const stated = decision.presentationStated ? new Set(decision.presentationStated) : undefined;
  const attested = input.flow.terms.purposes
    .filter((purpose) => purpose.takes_decision && (!presented || presented.has(purpose.key)) && statuses[purpose.key] !== undefined && (!stated || stated.has(purpose.key)))
    .map((purpose) => purpose.key);
  return attested.length > 0 ? attested : undefined;
}

/**
 * When the consent field was rendered (its entries' `rendered_at`, the render proof's time), on the
 * channels where the service rendered it; undefined elsewhere or when the evidence names no valid time.
 */
function fieldRenderedAtOf(input: FrozenReceiptInput): string | undefined {
  if (!RENDERING_CHANNELS.includes(input.decision.channel)) return undefined;
  const renderedAt = input.evidence?.renderingEvidence?.[0]?.rendered_at;
  return typeof renderedAt === 'string' && Number.isFinite(Date.parse(renderedAt)) ? renderedAt : undefined;
}

function frozenEvents(input: FrozenReceiptInput, recordType: RecordType, granted: readonly GrantedPurpose[], principal: string): ReceiptEvent[] {
  const { decision, application, flow } = input;
  const events: ReceiptEvent[] = [];
  // Unticking a right-to-object box is the person's act, made when the decision was: one row per purpose.
  const objections: ReceiptEvent[] = objectedPurposes(input).map((purposeId) => ({
    event_time: decision.decidedAt,
    entity_id: principal,
    event_type: 'explicit',
    event_state: 'objection recorded',
    purpose_id: purposeId,
  }));
  // The consent field: the service rendered the notice and its controls into the organisation's
  // page when that page asked for them, at the render proof's time (its own signed evidence).
  const fieldRenderedAt = fieldRenderedAtOf(input);
  const noticeShownAt = decision.noticeShownAt ?? fieldRenderedAt;
  const requestedAt = decision.requestedAt ?? fieldRenderedAt;
  if (noticeShownAt !== undefined) {
    events.push({ event_time: noticeShownAt, entity_id: application.id, event_type: 'regular', event_state: 'notice shown' });
  }
  if (recordType === 'notice_record') {
    events.push({ event_time: decision.decidedAt, entity_id: principal, event_type: 'explicit', event_state: 'notice acknowledged' });
    return [...events, ...objections];
  }
  if (requestedAt !== undefined) {
    events.push({ event_time: requestedAt, entity_id: application.id, event_type: 'regular', event_state: 'consent requested' });
  }
  events.push({
    event_time: decision.decidedAt,
    ...(flow.terms.consent_duration !== null && { validity_duration: flow.terms.consent_duration }),
    entity_id: principal,
    // Consent is an explicit act; a grant resting only on not objecting (legitimate interest) is implicit.
    event_type: granted.some((purpose) => purpose.basis === 'consent') ? 'explicit' : 'implicit',
    event_state: 'consent given',
    ...(decision.supersedes !== undefined && { record_reference: decision.supersedes }),
  });
  return [...events, ...objections];
}

/**
 * Builds the decision-time part of a consent (or notice) receipt from what the service knows at
 * commit. See FrozenReceiptInput for where each input comes from. Decisions:
 * - `record_type` is `consent_record` when at least one purpose counts as granted, else
 *   `notice_record` (a notice-only flow, or a decision that granted nothing: the person was shown the
 *   notice and answered it; no `consent given` is ever frozen without a grant).
 * - Frozen events, in canonical order: `notice shown` (the application, when observed),
 *   `consent requested` (the application, at the session's creation, when there was a session),
 *   `consent given` (the principal, or the record id on anonymous records, at `decidedAt`, with the
 *   flow's consent duration as `validity_duration`). Notice records freeze `notice shown` and
 *   `notice acknowledged` instead. Then one `objection recorded` per right-to-object purpose the
 *   person objected to (the principal, at `decidedAt`, explicit, with the purpose in `purpose_id`: an
 *   objection is always to one purpose; that purpose is not in `pii_processing.purposes`, which lists
 *   granted purposes only, so its key names the flow's purpose the notice presented). Such rows carry
 *   no `event_channel`: that is for rows appended after the decision.
 * - `extensions.presentation_attested` on every channel but the service-rendered ones (hosted,
 *   embedded, embedded_field, embedded_field_browser): the purposes taking a decision, whose
 *   presentation the organisation attested (presentationAttestedOf).
 * - `collection_mechanism` is the flow's pattern; `collection_method` its human-readable form.
 * - `impact_assessment` is written only when a granted purpose relies on legitimate interest and
 *   exactly one active assessment is given.
 * The result is checked against the schema (a failure is a defect: ReceiptSchemaViolation); an input
 * that breaks a rule is refused with `validation_failed` naming each field.
 * `options.notices`: where the privacy notice of terms that never change is kept once worked out.
 */
export function freezeConsentReceipt(input: FrozenReceiptInput, options: { notices?: NoticeMemo } = {}): FrozenReceipt {
  const issues = new ReceiptInputIssues();
  checkInput(input, issues);
  issues.throwIfAny('The receipt input is not valid');

  const { flow, decision, application } = input;
  const terms = flow.terms;
  const granted = grantedPurposes({
    purposes: terms.purposes,
    statuses: decision.purposeStatuses,
    outcome: decision.outcome,
    presented: decision.presentedPurposes,
  });
  const recordType = recordTypeOf(granted);
  if (recordType !== 'consent_record' && input.evidence?.signatureEvidence !== undefined) {
    issues.add('evidence.signatureEvidence', 'is recorded on consent records only, and nothing was granted');
  }
  issues.throwIfAny('The receipt input is not valid');

  const anonymous = 'anonymous' in input.subject;
  const principal = 'id' in input.subject ? input.subject.id : input.recordId;
  const locale = decision.locale ?? terms.locale;

  const record: ReceiptRecord = {
    schema_version: RECEIPT_SCHEMA_VERSION,
    conforms_to: RECEIPT_CONFORMS_TO,
    record_id: input.recordId,
    record_type: recordType,
    ...(anonymous ? { anonymous: true as const } : { pii_principal_id: principal }),
  };

  const reliesOnLegitimateInterest = granted.some((purpose) => purpose.basis === 'legitimate_interest');
  const assessments = input.legitimateInterestAssessments ?? [];
  const recipients = application.recipients;
  const piiProcessing: PiiProcessing = {
    language: locale,
    jurisdiction: terms.jurisdiction ?? 'unspecified',
    privacy_notice: options.notices
      ? options.notices.of(flow.id, terms, { locale, presented: decision.presentedPurposes })
      : privacyNotice({ flowId: flow.id, ...noticeContentOf(terms, { locale, presented: decision.presentedPurposes }) }),
    collection_method: collectionMethodText(terms.pattern, decision.channel),
    purposes: granted.map(receiptPurpose),
    storage_locations: [input.storageCountry],
    ...(input.processingLocations !== undefined && { processing_locations: [...input.processingLocations] }),
    ...(input.withdrawalUrl !== undefined && !anonymous && { withdrawal_method: input.withdrawalUrl }),
    ...(recipients !== undefined && { recipient_third_parties: recipients.map((recipient) => recipient.id) }),
    ...(input.privacyRights !== undefined && { privacy_rights: { ...input.privacyRights } }),
    ...(reliesOnLegitimateInterest && assessments.length === 1 && { impact_assessment: assessments[0] }),
  };

  const parties: Party[] = [
    controllerParty(application),
    configuredParty(input.processor, 'processor'),
    ...(input.supervisoryAuthority ? [configuredParty(input.supervisoryAuthority, 'supervisory_authority')] : []),
    ...(recipients ?? []).map(recipientParty),
  ];

  const evidence = input.evidence ?? {};
  const presentationAttested = presentationAttestedOf(input);
  const extensions: ReceiptExtensions = {
    collection_mechanism: terms.pattern,
    ...(decision.deliveryMode !== undefined && { delivery_mode: receiptDeliveryMode(decision.deliveryMode) }),
    ...(evidence.scopes !== undefined && { scopes: [...evidence.scopes] }),
    ...(evidence.sensitive !== undefined && { sensitive: evidence.sensitive }),
    consent_flow_id: flow.id,
    ...(evidence.agentDisclosures !== undefined && { agent_disclosures: jsonCopy([...evidence.agentDisclosures]) }),
    ...(evidence.signatureEvidence !== undefined && { signature_evidence: jsonCopy([...evidence.signatureEvidence]) }),
    collection_channel: decision.channel,
    ...(evidence.collectionPlatform !== undefined && { collection_platform: evidence.collectionPlatform }),
    // A verdict on no purpose states nothing (a capture held with empty labels before they were read as none).
    ...(evidence.wordingVerdict !== undefined && Object.keys(evidence.wordingVerdict).length > 0 && { wording_drift: { ...evidence.wordingVerdict } }),
    captured_at: decision.decidedAt,
    recorded_at: decision.recordedAt,
    ...(presentationAttested !== undefined && { presentation_attested: presentationAttested }),
    ...(evidence.renderingEvidence !== undefined && { rendering_evidence: jsonCopy([...evidence.renderingEvidence]) }),
  };

  const frozen: FrozenReceipt = {
    record,
    pii_processing: piiProcessing,
    party_identification: parties,
    event: frozenEvents(input, recordType, granted, principal),
    extensions,
  };
  assertValidReceipt({ $schema: CHECK_SCHEMA_URL, ...frozen });
  return frozen;
}
