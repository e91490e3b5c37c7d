/**
 * `flavor=dpv`: the receipt as JSON-LD in terms of the W3C Data Privacy Vocabulary.
 *
 * The `@context` is inline, so a standard processor expands the document without fetching anything.
 * The record is the subject node: the `record` and `pii_processing` sections describe it directly,
 * parties hang off it by role, and the event rows become an ordered list of event nodes.
 *
 * Naming rule of the output, so a reader can tell the two vocabularies apart at a glance:
 * - a key spelled like a DPV property (`hasPurpose`, `hasConsentStatus`, ...) is that DPV term;
 * - every other key keeps the receipt's own snake_case field name and expands, through `@vocab`, to
 *   `urn:dcr:receipt#<field_name>` (RECEIPT_TERMS_NAMESPACE). A URN never resolves, so the terms are
 *   stable across countries and deployments, and nothing is ever fetched for them.
 *
 * Identifiers become IRIs in the same URN space: `urn:dcr:record:<record_id>`,
 * `urn:dcr:record:<record_id>#purpose-<purpose_id>`, `urn:dcr:party:<party_id>` and
 * `urn:dcr:principal:<pii_principal_id>` (each identifier percent-encoded); the identifier itself is
 * kept as `dpv:hasIdentifier` on its node.
 */

export const DPV_NAMESPACE = 'https://w3id.org/dpv#';

/** Namespace of the receipt fields DPV has no term for: `urn:dcr:receipt#<field_name>`. */
export const RECEIPT_TERMS_NAMESPACE = 'urn:dcr:receipt#';

const XSD_NAMESPACE = 'http://www.w3.org/2001/XMLSchema#';

const typed = (field: string, datatype: string) => ({ '@id': `dcr:${field}`, '@type': datatype });
const linkTo = (dpvTerm: string) => ({ '@id': `dpv:${dpvTerm}`, '@type': '@id' });

/** The inline JSON-LD context of every DPV receipt. JSON-LD 1.0 features only. */
export const DPV_RECEIPT_CONTEXT: Readonly<Record<string, unknown>> = deepFreeze({
  dpv: DPV_NAMESPACE,
  dcr: RECEIPT_TERMS_NAMESPACE,
  xsd: XSD_NAMESPACE,
  '@vocab': RECEIPT_TERMS_NAMESPACE,

  hasIdentifier: 'dpv:hasIdentifier',
  hasName: 'dpv:hasName',
  hasAddress: 'dpv:hasAddress',
  hasContact: 'dpv:hasContact',
  hasJurisdiction: 'dpv:hasJurisdiction',
  hasNotice: 'dpv:hasNotice',
  hasLocation: 'dpv:hasLocation',
  hasStorageCondition: 'dpv:hasStorageCondition',
  hasThirdCountry: 'dpv:hasThirdCountry',
  hasImpactAssessment: 'dpv:hasImpactAssessment',
  hasPurpose: linkTo('hasPurpose'),
  hasDataSubject: linkTo('hasDataSubject'),
  hasDataController: linkTo('hasDataController'),
  hasDataProcessor: linkTo('hasDataProcessor'),
  hasAuthority: linkTo('hasAuthority'),
  hasRecipient: linkTo('hasRecipient'),
  hasRecipientThirdParty: linkTo('hasRecipientThirdParty'),
  hasConsentStatus: linkTo('hasConsentStatus'),
  hasNoticeStatus: linkTo('hasNoticeStatus'),
  hasStatus: linkTo('hasStatus'),

  $schema: typed('schema', 'xsd:anyURI'),
  // Event rows keep their canonical order; an empty recipients list stays an assertion (rdf:nil).
  event: { '@id': 'dcr:event', '@container': '@list' },
  recipient_third_parties: { '@id': 'dcr:recipient_third_parties', '@container': '@list' },
  event_time: typed('event_time', 'xsd:dateTime'),
  captured_at: typed('captured_at', 'xsd:dateTime'),
  recorded_at: typed('recorded_at', 'xsd:dateTime'),
  completed_at: typed('completed_at', 'xsd:dateTime'),
  valid_from: typed('valid_from', 'xsd:dateTime'),
  valid_until: typed('valid_until', 'xsd:dateTime'),
  validity_duration: typed('validity_duration', 'xsd:duration'),
  cooling_off: typed('cooling_off', 'xsd:duration'),
  withdrawal_method: typed('withdrawal_method', 'xsd:anyURI'),
  party_url: typed('party_url', 'xsd:anyURI'),
  url: typed('url', 'xsd:anyURI'),
});

/** Event states with a DPV consent status; `consent given` with a predecessor is also a renewal. */
const CONSENT_STATUS_OF_STATE: Readonly<Record<string, string>> = {
  'consent requested': 'dpv:ConsentRequested',
  'consent given': 'dpv:ConsentGiven',
  'consent refused': 'dpv:ConsentRefused',
  'consent withdrawn': 'dpv:ConsentWithdrawn',
  'consent expired': 'dpv:ConsentExpired',
  'consent invalidated': 'dpv:ConsentInvalidated',
};

const NOTICE_STATUS_OF_STATE: Readonly<Record<string, string>> = {
  'notice shown': 'dpv:NoticeCommunicated',
};

const RECORD_CLASS_OF_TYPE: Readonly<Record<string, string>> = {
  consent_record: 'dpv:ConsentRecord',
  notice_record: 'dcr:NoticeRecord',
  authorization_record: 'dcr:AuthorizationRecord',
};

/** Party roles with a DPV class, and the DPV property that links the record to such a party. */
const PARTY_ROLES: Readonly<Record<string, { link: string; type: string }>> = {
  controller: { link: 'hasDataController', type: 'dpv:DataController' },
  processor: { link: 'hasDataProcessor', type: 'dpv:DataProcessor' },
  supervisory_authority: { link: 'hasAuthority', type: 'dpv:DataProtectionAuthority' },
  recipient: { link: 'hasRecipient', type: 'dpv:Recipient' },
};

type JsonObject = Record<string, unknown>;

/** The receipt as DPV JSON-LD (see the module comment for the mapping). Never fetches anything. */
export function dpvReceipt(receipt: JsonObject): JsonObject {
  const record = sectionOf(receipt, 'record');
  const processing = sectionOf(receipt, 'pii_processing');
  const recordId = typeof record.record_id === 'string' ? record.record_id : undefined;
  const recordType = typeof record.record_type === 'string' ? record.record_type : 'consent_record';

  // A JSON round trip rather than structuredClone: the copy's objects come from this realm.
  const doc: JsonObject = { '@context': JSON.parse(JSON.stringify(DPV_RECEIPT_CONTEXT)) as JsonObject };
  if (recordId !== undefined) doc['@id'] = recordIri(recordId);
  const recordClass = RECORD_CLASS_OF_TYPE[recordType];
  if (recordClass) doc['@type'] = recordClass;

  for (const [key, value] of Object.entries(receipt)) {
    switch (key) {
      case 'record':
        if (isObject(value)) addRecordSection(doc, record);
        else put(doc, key, value);
        break;
      case 'pii_processing':
        if (isObject(value)) addProcessingSection(doc, processing, recordId);
        else put(doc, key, value);
        break;
      case 'party_identification':
        addParties(doc, value);
        break;
      case 'event':
        doc.event = Array.isArray(value) ? value.map((row) => eventNode(row, recordId)) : value;
        break;
      default:
        // `$schema`, `authority`, `extensions` and any later section keep their own names.
        put(doc, key, value);
    }
  }

  if (record.anonymous === true && record.pii_principal_id === undefined && recordId !== undefined) {
    // On anonymous records the record identifier stands in for the principal.
    put(doc, 'hasDataSubject', { '@type': 'dpv:DataSubject', hasIdentifier: recordId });
  }
  if (recordClass === 'dpv:ConsentRecord') {
    const status = currentConsentStatus(receipt.event, isObject(receipt.pii_processing) ? receipt.pii_processing.purposes : undefined);
    if (status) doc.hasConsentStatus = status;
  }
  return doc;
}

function addRecordSection(doc: JsonObject, record: JsonObject): void {
  for (const [key, value] of Object.entries(record)) {
    if (key === 'record_id') put(doc, 'hasIdentifier', value);
    else if (key === 'pii_principal_id' && typeof value === 'string') {
      put(doc, 'hasDataSubject', { '@id': principalIri(value), '@type': 'dpv:DataSubject', hasIdentifier: value });
    } else put(doc, key, value);
  }
}

function addProcessingSection(doc: JsonObject, processing: JsonObject, recordId: string | undefined): void {
  for (const [key, value] of Object.entries(processing)) {
    switch (key) {
      case 'jurisdiction':
        put(doc, 'hasJurisdiction', value);
        break;
      case 'privacy_notice':
        put(doc, 'hasNotice', isObject(value) ? { '@type': 'dpv:PrivacyNotice', ...value } : value);
        break;
      case 'purposes':
        put(doc, 'hasPurpose', Array.isArray(value) ? value.map((purpose) => purposeNode(purpose, recordId)) : value);
        break;
      case 'storage_locations':
        put(doc, 'hasStorageCondition', { '@type': 'dpv:StorageLocation', hasLocation: value });
        break;
      case 'processing_locations':
        // Present only with recorded lawful-transfer bases: the destinations of a cross-border transfer.
        put(doc, 'hasThirdCountry', value);
        break;
      case 'recipient_third_parties':
        put(doc, key, value);
        if (Array.isArray(value)) {
          const parties = value.filter((id): id is string => typeof id === 'string').map(partyIri);
          if (parties.length > 0) put(doc, 'hasRecipientThirdParty', parties);
        }
        break;
      case 'impact_assessment':
        put(doc, 'hasImpactAssessment', value);
        break;
      default:
        put(doc, key, value);
    }
  }
}

function addParties(doc: JsonObject, parties: unknown): void {
  if (!Array.isArray(parties)) {
    put(doc, 'party_identification', parties);
    return;
  }
  for (const party of parties) {
    const role = isObject(party) && typeof party.party_role === 'string' ? PARTY_ROLES[party.party_role] : undefined;
    // Roles without a DPV class (principal, agent on authorization records) stay `dcr:party`.
    put(doc, role ? role.link : 'party', partyNode(party, role?.type));
  }
}

function partyNode(party: unknown, type: string | undefined): unknown {
  if (!isObject(party)) return party;
  const node: JsonObject = {};
  if (typeof party.party_id === 'string') node['@id'] = partyIri(party.party_id);
  if (type) node['@type'] = type;
  for (const [key, value] of Object.entries(party)) {
    if (key === 'party_id') node.hasIdentifier = value;
    else if (key === 'party_name') node.hasName = value;
    else if (key === 'party_address') node.hasAddress = value;
    else if (key === 'party_email' || key === 'party_phone') put(node, 'hasContact', value);
    else node[key] = value;
  }
  return node;
}

function purposeNode(purpose: unknown, recordId: string | undefined): unknown {
  if (!isObject(purpose)) return purpose;
  const node: JsonObject = {};
  if (typeof purpose.purpose_id === 'string' && recordId !== undefined) {
    node['@id'] = purposeIri(recordId, purpose.purpose_id);
  }
  node['@type'] = 'dpv:Purpose';
  for (const [key, value] of Object.entries(purpose)) {
    if (key === 'purpose_id') node.hasIdentifier = value;
    else node[key] = value;
  }
  return node;
}

function eventNode(row: unknown, recordId: string | undefined): unknown {
  if (!isObject(row)) return row;
  const node: JsonObject = { '@type': 'dcr:ReceiptEvent', ...row };
  const state = typeof row.event_state === 'string' ? row.event_state : undefined;
  if (state !== undefined) {
    const consentStatus = CONSENT_STATUS_OF_STATE[state];
    const noticeStatus = NOTICE_STATUS_OF_STATE[state];
    if (consentStatus) {
      node.hasConsentStatus =
        state === 'consent given' && row.record_reference !== undefined
          ? [consentStatus, 'dpv:RenewedConsentGiven']
          : consentStatus;
    } else if (noticeStatus) {
      node.hasNoticeStatus = noticeStatus;
    } else {
      const serviceState = pascalCase(state);
      if (serviceState) node.hasStatus = `dcr:${serviceState}`;
    }
  }
  if (typeof row.purpose_id === 'string' && recordId !== undefined) {
    // A scoped withdrawal or an objection: the event keeps `purpose_id` and also links to that purpose's node.
    node.hasPurpose = purposeIri(recordId, row.purpose_id);
  }
  return node;
}

/**
 * The consent status of the latest event that concerns the whole record: a whole-record event, or the
 * scoped withdrawal (or objection to a purpose the record listed) that leaves none of the record's
 * purposes (`purposes`, its `pii_processing` purposes) standing, as the receipt's own projection
 * counts a consent withdrawn purpose by purpose.
 */
function currentConsentStatus(events: unknown, purposes: unknown): string | undefined {
  if (!Array.isArray(events)) return undefined;
  const listed = Array.isArray(purposes) ? purposes.flatMap((purpose) => (isObject(purpose) && typeof purpose.purpose_id === 'string' ? [purpose.purpose_id] : [])) : [];
  const withdrawn = new Set<string>();
  let status: string | undefined;
  for (const row of events) {
    if (!isObject(row) || typeof row.event_state !== 'string') continue;
    if (row.purpose_id === undefined) {
      status = CONSENT_STATUS_OF_STATE[row.event_state] ?? status;
    } else if (typeof row.purpose_id === 'string' && (row.event_state === 'consent withdrawn' || (row.event_state === 'objection recorded' && listed.includes(row.purpose_id)))) {
      withdrawn.add(row.purpose_id);
      if (listed.length > 0 && listed.every((id) => withdrawn.has(id))) status = CONSENT_STATUS_OF_STATE['consent withdrawn'];
    }
  }
  return status;
}

function recordIri(recordId: string): string {
  return `urn:dcr:record:${encodeURIComponent(recordId)}`;
}

function purposeIri(recordId: string, purposeId: string): string {
  return `${recordIri(recordId)}#purpose-${encodeURIComponent(purposeId)}`;
}

function partyIri(partyId: string): string {
  return `urn:dcr:party:${encodeURIComponent(partyId)}`;
}

function principalIri(principalId: string): string {
  return `urn:dcr:principal:${encodeURIComponent(principalId)}`;
}

function pascalCase(state: string): string {
  return state
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join('');
}

/** Sets `key`, or appends to what is already there (two sections may carry the same field). */
function put(node: JsonObject, key: string, value: unknown): void {
  if (!(key in node)) {
    node[key] = value;
    return;
  }
  const existing = node[key];
  node[key] = [...(Array.isArray(existing) ? existing : [existing]), ...(Array.isArray(value) ? value : [value])];
}

function sectionOf(receipt: JsonObject, name: string): JsonObject {
  const section = receipt[name];
  return isObject(section) ? section : {};
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
