import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { DomainError } from '@dcr/domain';
import { expectSchemaValid, schemaErrors } from '../testing';
import {
  assertValidReceipt,
  AUTHORIZATION_EVENT_STATES,
  COLLECTION_CHANNELS,
  CONSENT_EVENT_STATES,
  LAWFUL_BASES,
  PARTY_PROVENANCES,
  PARTY_ROLES,
  PARTY_TYPES,
  RECEIPT_CONFORMS_TO,
  RECEIPT_DELIVERY_MODES,
  RECEIPT_EVENT_CHANNELS,
  RECEIPT_EVENT_STATES,
  RECEIPT_EVENT_TYPES,
  RECEIPT_PURPOSE_MECHANISMS,
  RECEIPT_SCHEMA_ID,
  RECEIPT_SCHEMA_PATH,
  RECEIPT_SCHEMA_VERSION,
  Receipt,
  receiptSchema,
  receiptSchemaBytes,
  receiptSchemaFile,
  receiptSchemaUrl,
  RECORD_TYPES,
  ReceiptSchemaViolation,
  validateReceipt,
} from '.';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A complete identified consent receipt, written by hand (independent of the builder). */
function consentReceipt(): Json {
  return {
    $schema: 'http://127.0.0.1:3000/schemas/receipt/v2/record.json',
    record: {
      schema_version: 'service-cr/2.13',
      conforms_to: 'ISO/IEC TS 27560:2023',
      record_id: 'rec_0001',
      record_type: 'consent_record',
      pii_principal_id: 'sub_a1b2c3d4e5f6g7h8i9j0',
    },
    pii_processing: {
      language: 'en-GB',
      jurisdiction: 'EU',
      privacy_notice: { reference: 'notice:flw_dev_fedcba9876543210:0123456789abcdef', hash: 'a'.repeat(64), url: 'https://acme.example/privacy' },
      collection_method: 'Standard consent flow, decided on a decision page hosted by the service.',
      purposes: [
        { purpose_id: 'marketing_email', purpose: 'Newsletter', purpose_description: 'Monthly', lawful_basis: 'consent', mechanism: 'explicit' },
        { purpose_id: 'product_analytics', purpose: 'Analytics', lawful_basis: 'legitimate_interest', mechanism: 'opt_out' },
      ],
      storage_locations: ['DE'],
      processing_locations: ['US', 'US-CA'],
      withdrawal_method: 'https://api.example/receipts/rec_0001/withdraw',
      recipient_third_parties: ['mailer-co'],
      privacy_rights: { access: 'https://api.example/me', export: 'https://api.example/me/export' },
      processing_method: ['cap.read_email'],
      impact_assessment: 'lia_0001',
    },
    party_identification: [
      { party_id: 'tp_dev_0123456789abcdef', party_name: 'Acme GmbH', party_role: 'controller', party_type: 'organization', provenance: 'declared', party_address: 'Berlin', party_email: 'privacy@acme.example', party_phone: '+49 30 1234567', party_url: 'https://acme.example' },
      { party_id: 'decision-service', party_name: 'Decision Service Ltd', party_role: 'processor', party_type: 'organization' },
      { party_id: 'de-bfdi', party_name: 'BfDI', party_role: 'supervisory_authority' },
      { party_id: 'mailer-co', party_name: 'Mailer Co.', party_role: 'recipient', party_type: 'organization', provenance: 'declared' },
    ],
    event: [
      { event_time: '2025-03-01T09:58:03.120Z', entity_id: 'tp_dev_0123456789abcdef', event_type: 'regular', event_state: 'notice shown' },
      { event_time: '2025-03-01T09:58:00Z', entity_id: 'tp_dev_0123456789abcdef', event_type: 'regular', event_state: 'consent requested' },
      { event_time: '2025-03-01T10:00:00Z', validity_duration: 'P1Y', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'consent given', record_reference: 'rec_0000' },
      { event_time: '2025-04-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'consent withdrawn', purpose_id: 'marketing_email', event_channel: 'receipt_link' },
      { event_time: '2026-03-01T10:00:00Z', entity_id: 'decision-service', event_type: 'regular', event_state: 'consent expired' },
    ],
    extensions: {
      collection_mechanism: 'standard',
      delivery_mode: 'redirect',
      scopes: ['openid', 'email'],
      sensitive: false,
      consent_flow_id: 'flw_dev_fedcba9876543210',
      agent_disclosures: [{ agent_id: 'agt_1', disclosed_at: '2025-03-01T09:59:00Z' }],
      signature_evidence: [{ pointer: 'env_1', digest: 'b'.repeat(64), completed_at: '2025-03-01T09:59:30Z' }],
      collection_channel: 'hosted',
      wording_drift: { marketing_email: 'match' },
      captured_at: '2025-03-01T10:00:00Z',
      recorded_at: '2025-03-01T10:00:00.250Z',
      presentation_attested: ['marketing_email'],
    },
  };
}

/** A complete authorization receipt. */
function authorizationReceipt(): Json {
  return {
    $schema: 'https://schemas.example/schemas/receipt/v2/record.json',
    record: {
      schema_version: 'service-cr/2.13',
      conforms_to: 'ISO/IEC TS 27560:2023',
      record_id: 'rec_auth_1',
      record_type: 'authorization_record',
      pii_principal_id: 'sub_a1b2c3d4e5f6g7h8i9j0',
    },
    party_identification: [
      { party_id: 'tp_dev_0123456789abcdef', party_name: 'Acme GmbH', party_role: 'controller' },
      { party_id: 'decision-service', party_name: 'Decision Service Ltd', party_role: 'processor' },
      { party_id: 'sub_a1b2c3d4e5f6g7h8i9j0', party_name: 'A. Person', party_role: 'principal', party_type: 'natural_person' },
      { party_id: 'agt_travel', party_name: 'Travel agent', party_role: 'agent', party_type: 'software_agent' },
    ],
    authority: {
      scope_bounds: { allowed: ['calendar.read'], denied: [] },
      value_bounds: { per_transaction: { amount: 50000, currency: 'EUR' } },
      sequence_bounds: { steps: ['search', 'book'] },
      valid_from: '2025-03-01T10:00:00Z',
      valid_until: '2025-06-01T10:00:00Z',
      cooling_off: 'PT24H',
      withdrawal_method: 'https://api.example/authorities/rec_auth_1/revoke',
    },
    event: [
      { event_time: '2025-03-01T09:00:00Z', entity_id: 'agt_travel', event_type: 'regular', event_state: 'authority requested' },
      { event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'authority granted', approval_id: 'apr_1' },
      { event_time: '2025-03-09T10:00:00Z', entity_id: 'agt_travel', event_type: 'regular', event_state: 'authority exercised', occurrences: 4 },
    ],
    extensions: {
      grant_integrity: { content_hash: 'c'.repeat(64), key_versions: ['us-2025-01', 'principal-1'] },
      delegation_chain_root: 'dlg_root_1',
      capability_manifest: { hash: 'd'.repeat(64), version: 3, url: 'https://api.example/.well-known/transparency/agents/agt_travel/manifests/3' },
      accountability_record: 'acc_1',
    },
  };
}

const mutate = (make: () => Json, change: (receipt: Json) => void): Json => {
  const receipt = make();
  change(receipt);
  return receipt;
};

describe('the receipt schema file', () => {
  it('lives in schemas/receipt/v2/record.json and is served byte for byte', () => {
    const file = receiptSchemaFile();
    expect(isAbsolute(file)).toBe(true);
    expect(file.endsWith(['schemas', 'receipt', 'v2', 'record.json'].join(require('node:path').sep))).toBe(true);
    expect(receiptSchemaBytes().equals(readFileSync(file))).toBe(true);
    const copy = receiptSchemaBytes();
    copy[0] = 0;
    expect(receiptSchemaBytes().equals(readFileSync(file))).toBe(true);
  });

  it('is Draft 2020-12 with the stable $id and names the version', () => {
    const schema = receiptSchema();
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['$id']).toBe(RECEIPT_SCHEMA_ID);
    expect(schema['title']).toContain(RECEIPT_SCHEMA_VERSION);
    expect(schema['description']).toMatch(/Top-level shape/);
  });

  it('exports the constants of the specification', () => {
    expect(RECEIPT_SCHEMA_VERSION).toBe('service-cr/2.13');
    expect(RECEIPT_CONFORMS_TO).toBe('ISO/IEC TS 27560:2023');
    expect(RECEIPT_SCHEMA_PATH).toBe('/schemas/receipt/v2/record.json');
    expect(receiptSchemaUrl('http://127.0.0.1:3000/')).toBe('http://127.0.0.1:3000/schemas/receipt/v2/record.json');
  });

  it('closes the same enumerations as the TypeScript types', () => {
    const defs = receiptSchema()['$defs'] as Json;
    expect(RECEIPT_EVENT_STATES).toHaveLength(19);
    expect(defs.event.properties.event_state.enum).toEqual([...RECEIPT_EVENT_STATES]);
    expect(defs.consent_event_state.enum).toEqual([...CONSENT_EVENT_STATES]);
    expect(defs.authorization_event_state.enum).toEqual([...AUTHORIZATION_EVENT_STATES]);
    expect(defs.event.properties.event_type.enum).toEqual([...RECEIPT_EVENT_TYPES]);
    expect(defs.event.properties.event_channel.enum).toEqual([...RECEIPT_EVENT_CHANNELS]);
    expect(defs.extensions.properties.collection_channel.enum).toEqual([...COLLECTION_CHANNELS]);
    expect(defs.extensions.properties.delivery_mode.enum).toEqual([...RECEIPT_DELIVERY_MODES]);
    expect(defs.record.properties.record_type.enum).toEqual([...RECORD_TYPES]);
    expect(defs.party.properties.party_role.enum).toEqual([...PARTY_ROLES]);
    expect(defs.party.properties.party_type.enum).toEqual([...PARTY_TYPES]);
    expect(defs.party.properties.provenance.enum).toEqual([...PARTY_PROVENANCES]);
    expect(defs.purpose.properties.lawful_basis.enum).toEqual([...LAWFUL_BASES]);
    expect(defs.purpose.properties.mechanism.enum).toEqual([...RECEIPT_PURPOSE_MECHANISMS]);
  });
});

describe('validateReceipt accepts', () => {
  it('a consent receipt using every consent-record field', () => {
    expectSchemaValid(consentReceipt());
  });

  it('an authorization receipt using every authorization field, with or without declared purposes', () => {
    expectSchemaValid(authorizationReceipt());
    expectSchemaValid(
      mutate(authorizationReceipt, (r) => {
        r.pii_processing = { language: 'en', jurisdiction: 'unspecified', purposes: [{ purpose_id: 'booking', purpose: 'Book travel', lawful_basis: 'contract' }] };
      }),
    );
  });

  it('an older record: no record_type, starting at consent given, notice url only', () => {
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        delete r.record.record_type;
        r.event = r.event.slice(2, 3);
        r.pii_processing.privacy_notice = { url: 'https://acme.example/privacy' };
        delete r.extensions;
      }),
    );
  });

  it('an anonymous record (anonymous: true, no principal id)', () => {
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        delete r.record.pii_principal_id;
        r.record.anonymous = true;
      }),
    );
  });

  it('empty recipients (nothing shared) and absent recipients (not enumerable)', () => {
    expectSchemaValid(mutate(consentReceipt, (r) => (r.pii_processing.recipient_third_parties = [])));
    expectSchemaValid(mutate(consentReceipt, (r) => delete r.pii_processing.recipient_third_parties));
  });

  it('a notice record with notice events and no purposes', () => {
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        r.record.record_type = 'notice_record';
        r.pii_processing.purposes = [];
        r.event = [
          { event_time: '2025-03-01T09:58:03Z', entity_id: 'tp_dev_0123456789abcdef', event_type: 'regular', event_state: 'notice shown' },
          { event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'notice acknowledged' },
        ];
        delete r.extensions.signature_evidence;
      }),
    );
  });

  it('objections: frozen with the decision (no channel), appended later (with its channel), each naming its purpose', () => {
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        r.event.splice(3, 0, { event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'objection recorded', purpose_id: 'fraud_prevention' });
        r.event.push({ event_time: '2026-04-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'implicit', event_state: 'objection recorded', purpose_id: 'product_analytics', event_channel: 'newer_record' });
      }),
    );
  });

  it('rendering evidence on an embedded field and a form platform on its webhook channel', () => {
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        r.extensions.collection_channel = 'embedded_field';
        r.extensions.rendering_evidence = [{ renderer: 'service-consent-field/1', trusted_gesture: true }];
      }),
    );
    expectSchemaValid(
      mutate(consentReceipt, (r) => {
        r.extensions.collection_channel = 'form_platform_webhook';
        r.extensions.collection_platform = 'typeform';
      }),
    );
  });
});

describe('validateReceipt refuses', () => {
  const cases: Array<[string, () => Json, string]> = [
    ['a principal id on an anonymous record', () => mutate(consentReceipt, (r) => (r.record.anonymous = true)), '/record/pii_principal_id'],
    ['an identified record without a principal id', () => mutate(consentReceipt, (r) => delete r.record.pii_principal_id), '/record/pii_principal_id'],
    ['anonymous: false', () => mutate(consentReceipt, (r) => { delete r.record.pii_principal_id; r.record.anonymous = false; }), '/record/anonymous'],
    ['another schema version', () => mutate(consentReceipt, (r) => (r.record.schema_version = 'service-cr/2.12')), '/record/schema_version'],
    ['an unknown record type', () => mutate(consentReceipt, (r) => (r.record.record_type = 'disclosure_record')), '/record/record_type'],
    ['an authorization record without authority', () => mutate(authorizationReceipt, (r) => delete r.authority), '/authority'],
    ['an authority without its withdrawal method', () => mutate(authorizationReceipt, (r) => delete r.authority.withdrawal_method), '/authority/withdrawal_method'],
    ['an authority cooling-off that is not a duration', () => mutate(authorizationReceipt, (r) => (r.authority.cooling_off = '24 hours')), '/authority/cooling_off'],
    ['agent disclosures on an authorization record', () => mutate(authorizationReceipt, (r) => (r.extensions.agent_disclosures = [{ agent_id: 'agt_1' }])), '/extensions/agent_disclosures'],
    ['signature evidence on an authorization record', () => mutate(authorizationReceipt, (r) => (r.extensions.signature_evidence = [{ pointer: 'x' }])), '/extensions/signature_evidence'],
    ['an authorization record whose declared purposes are empty', () => mutate(authorizationReceipt, (r) => (r.pii_processing = { language: 'en', jurisdiction: 'EU', purposes: [] })), '/pii_processing/purposes'],
    ['consent states on an authorization record', () => mutate(authorizationReceipt, (r) => (r.event[0].event_state = 'consent requested')), '/event/0/event_state'],
    ['an authority section on a consent record', () => mutate(consentReceipt, (r) => (r.authority = authorizationReceipt().authority)), '/authority'],
    ['an authority section on a record without record_type', () => mutate(consentReceipt, (r) => { delete r.record.record_type; r.authority = authorizationReceipt().authority; }), '/authority'],
    ['grant integrity on a consent record', () => mutate(consentReceipt, (r) => (r.extensions.grant_integrity = authorizationReceipt().extensions.grant_integrity)), '/extensions/grant_integrity'],
    ['authority states on a consent record', () => mutate(consentReceipt, (r) => (r.event[0].event_state = 'authority granted')), '/event/0/event_state'],
    ['a principal party on a consent record', () => mutate(consentReceipt, (r) => (r.party_identification[3].party_role = 'principal')), '/party_identification/3/party_role'],
    ['a consent record without pii_processing', () => mutate(consentReceipt, (r) => delete r.pii_processing), '/pii_processing'],
    ['consent given on a notice record', () => mutate(consentReceipt, (r) => { r.record.record_type = 'notice_record'; delete r.extensions.signature_evidence; }), '/event/2/event_state'],
    ['signature evidence on a notice record', () => mutate(consentReceipt, (r) => { r.record.record_type = 'notice_record'; r.event = r.event.slice(0, 1); }), '/extensions/signature_evidence'],
    ['purpose_id on a non-withdrawal event', () => mutate(consentReceipt, (r) => (r.event[2].purpose_id = 'marketing_email')), '/event/2/purpose_id'],
    ['purpose_id on an expiry', () => mutate(consentReceipt, (r) => (r.event[4].purpose_id = 'marketing_email')), '/event/4/purpose_id'],
    ['an objection without its purpose', () => mutate(consentReceipt, (r) => (r.event[3] = { event_time: '2025-04-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'implicit', event_state: 'objection recorded', event_channel: 'newer_record' })), '/event/3/purpose_id'],
    ['occurrences outside authority exercised', () => mutate(authorizationReceipt, (r) => (r.event[1].occurrences = 2)), '/event/1/occurrences'],
    ['occurrences of zero', () => mutate(authorizationReceipt, (r) => (r.event[2].occurrences = 0)), '/event/2/occurrences'],
    ['an event channel on consent given', () => mutate(consentReceipt, (r) => (r.event[2].event_channel = 'receipt_link')), '/event/2/event_channel'],
    ['an unknown event channel', () => mutate(consentReceipt, (r) => (r.event[3].event_channel = 'phone_call')), '/event/3/event_channel'],
    ['a record reference outside consent given', () => mutate(consentReceipt, (r) => (r.event[3].record_reference = 'rec_0000')), '/event/3/record_reference'],
    ['a validity duration outside consent given', () => mutate(consentReceipt, (r) => (r.event[1].validity_duration = 'P1Y')), '/event/1/validity_duration'],
    ['a validity duration below second precision', () => mutate(consentReceipt, (r) => (r.event[2].validity_duration = 'PT0.5S')), '/event/2/validity_duration'],
    ['an empty duration', () => mutate(consentReceipt, (r) => (r.event[2].validity_duration = 'P')), '/event/2/validity_duration'],
    ['an approval id on a consent event', () => mutate(consentReceipt, (r) => (r.event[2].approval_id = 'apr_1')), '/event/2/approval_id'],
    ['an unknown event state', () => mutate(consentReceipt, (r) => (r.event[2].event_state = 'consent invalidated')), '/event/2/event_state'],
    ['an unknown event type', () => mutate(consentReceipt, (r) => (r.event[2].event_type = 'verbal')), '/event/2/event_type'],
    ['an event without its actor', () => mutate(consentReceipt, (r) => delete r.event[2].entity_id), '/event/2/entity_id'],
    ['an event time with an offset', () => mutate(consentReceipt, (r) => (r.event[2].event_time = '2025-03-01T11:00:00+01:00')), '/event/2/event_time'],
    ['an event time that is no time', () => mutate(consentReceipt, (r) => (r.event[2].event_time = '2025-13-01T10:00:00Z')), '/event/2/event_time'],
    ['no events', () => mutate(consentReceipt, (r) => (r.event = [])), '/event'],
    ['a lower-case storage location', () => mutate(consentReceipt, (r) => (r.pii_processing.storage_locations = ['de'])), '/pii_processing/storage_locations/0'],
    ['a notice hash without reference', () => mutate(consentReceipt, (r) => delete r.pii_processing.privacy_notice.reference), '/pii_processing/privacy_notice/reference'],
    ['a notice hash that is not sha256 hex', () => mutate(consentReceipt, (r) => (r.pii_processing.privacy_notice.hash = 'ABC')), '/pii_processing/privacy_notice/hash'],
    ['a purpose without its label', () => mutate(consentReceipt, (r) => delete r.pii_processing.purposes[0].purpose), '/pii_processing/purposes/0/purpose'],
    ['a language that is no locale', () => mutate(consentReceipt, (r) => (r.pii_processing.language = 'English')), '/pii_processing/language'],
    ['a missing jurisdiction', () => mutate(consentReceipt, (r) => delete r.pii_processing.jurisdiction), '/pii_processing/jurisdiction'],
    ['a withdrawal method that is no URL', () => mutate(consentReceipt, (r) => (r.pii_processing.withdrawal_method = 'mailto:x@y')), '/pii_processing/withdrawal_method'],
    ['a natural person as recipient', () => mutate(consentReceipt, (r) => (r.party_identification[3].party_type = 'natural_person')), '/party_identification/3/party_type'],
    ['no controller', () => mutate(consentReceipt, (r) => r.party_identification.shift()), '/party_identification'],
    ['two controllers', () => mutate(consentReceipt, (r) => (r.party_identification[2].party_role = 'controller')), '/party_identification'],
    ['no processor', () => mutate(consentReceipt, (r) => r.party_identification.splice(1, 1)), '/party_identification'],
    ['an unknown provenance', () => mutate(consentReceipt, (r) => (r.party_identification[0].provenance = 'verified')), '/party_identification/0/provenance'],
    ['a session delivery mode spelled direct', () => mutate(consentReceipt, (r) => (r.extensions.delivery_mode = 'direct')), '/extensions/delivery_mode'],
    ['an unknown collection channel', () => mutate(consentReceipt, (r) => (r.extensions.collection_channel = 'fax')), '/extensions/collection_channel'],
    ['rendering evidence on a hosted record', () => mutate(consentReceipt, (r) => (r.extensions.rendering_evidence = [{ renderer: 'x' }])), '/extensions/collection_channel'],
    ['a collection platform on another channel', () => mutate(consentReceipt, (r) => (r.extensions.collection_platform = 'typeform')), '/extensions/collection_channel'],
    ['a wording verdict other than match or drift', () => mutate(consentReceipt, (r) => (r.extensions.wording_drift = { marketing_email: 'close' })), '/extensions/wording_drift/marketing_email'],
    ['a missing $schema', () => mutate(consentReceipt, (r) => delete r.$schema), '/$schema'],
    ['a $schema of another document', () => mutate(consentReceipt, (r) => (r.$schema = 'https://api.example/schemas/receipt/v1/record.json')), '/$schema'],
    ['an unknown top-level section', () => mutate(consentReceipt, (r) => (r.signature = 'x')), '/signature'],
    ['an unknown record field', () => mutate(consentReceipt, (r) => (r.record.status = 'active')), '/record/status'],
    ['an unknown extension', () => mutate(consentReceipt, (r) => (r.extensions.flow_version = 2)), '/extensions/flow_version'],
  ];

  it.each(cases)('%s', (_name, make, path) => {
    const errors = schemaErrors(make());
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => e.path)).toContain(path);
    for (const error of errors) {
      expect(error.path).toMatch(/^\//);
      expect(error.message.length).toBeGreaterThan(0);
    }
  });

  it('says which party is missing or doubled', () => {
    expect(schemaErrors(mutate(consentReceipt, (r) => (r.party_identification[2].party_role = 'controller')))).toEqual([
      { path: '/party_identification', message: 'must contain exactly one item with party_role "controller"' },
    ]);
    expect(schemaErrors(mutate(consentReceipt, (r) => r.party_identification.splice(1, 1)))).toEqual([
      { path: '/party_identification', message: 'must contain at least one item with party_role "processor"' },
    ]);
  });

  it('anything that is not an object', () => {
    for (const value of [null, 'receipt', 42, [], undefined]) expect(validateReceipt(value).valid).toBe(false);
  });
});

describe('assertValidReceipt', () => {
  it('passes a valid receipt through', () => {
    const receipt = consentReceipt();
    expect(() => assertValidReceipt(receipt)).not.toThrow();
    const typed: Receipt = receipt as Receipt;
    expect(typed.record.record_id).toBe('rec_0001');
  });

  it('throws an internal_error ReceiptSchemaViolation listing every error', () => {
    const receipt = mutate(consentReceipt, (r) => {
      r.record.anonymous = true;
      r.event[2].purpose_id = 'marketing_email';
    });
    let thrown: unknown;
    try {
      assertValidReceipt(receipt);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ReceiptSchemaViolation);
    expect(thrown).toBeInstanceOf(DomainError);
    const violation = thrown as ReceiptSchemaViolation;
    expect(violation.code).toBe('internal_error');
    expect(violation.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['/record/pii_principal_id', '/event/2/purpose_id']));
    expect(violation.message).toContain('/record/pii_principal_id is not allowed here');
    expect(violation.message).toContain('/event/2/purpose_id is not allowed here');
    expect(violation.details).toEqual(violation.errors.map((e) => ({ field: e.path, reason: e.message })));
  });
});
