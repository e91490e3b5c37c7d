import { DomainError, noticeFingerprint as domainNoticeFingerprint, normaliseFlowTerms } from '@dcr/domain';
import {
  anonymousFieldInput,
  APPLICATION_ID,
  deepFreeze,
  expectSchemaValid,
  FLOW_ID,
  hostedConsentInput,
  importedRecordInput,
  NEWSLETTER_FLOW_BODY,
  SCHEMA_URL_BASE,
} from '../testing';
import { FrozenReceipt, FrozenReceiptInput, freezeConsentReceipt } from './freeze';
import { NoticeMemo } from './notice';
import { projectReceipt } from './project';

/** Freezes and reads back with no lifecycle, validating the receipt as read. */
function freezeAndRead(input: FrozenReceiptInput): FrozenReceipt {
  const frozen = freezeConsentReceipt(input);
  expectSchemaValid(projectReceipt(frozen, [], { schemaUrl: SCHEMA_URL_BASE }));
  return frozen;
}

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const withInput = (change: (input: FrozenReceiptInput) => void): FrozenReceiptInput => {
  const input = hostedConsentInput();
  change(input);
  return input;
};

describe('freezeConsentReceipt: an identified hosted decision', () => {
  const input = hostedConsentInput();
  const frozen = freezeAndRead(input);

  it('writes the record section', () => {
    expect(frozen.record).toEqual({
      schema_version: 'service-cr/2.13',
      conforms_to: 'ISO/IEC TS 27560:2023',
      record_id: 'rec_01hv3k9m2q8x7c4n5b6z',
      record_type: 'consent_record',
      pii_principal_id: 'sub_a1b2c3d4e5f6g7h8i9j0',
    });
  });

  it('writes pii_processing with the granted purposes and their decision-time labels', () => {
    const hash = domainNoticeFingerprint(input.flow.terms);
    expect(frozen.pii_processing).toEqual({
      language: 'en-GB',
      jurisdiction: 'EU',
      privacy_notice: { reference: `notice:${FLOW_ID}:${hash.slice(0, 16)}`, hash, url: 'https://acme.example/privacy' },
      collection_method: 'Standard consent flow, decided on a decision page hosted by the service.',
      purposes: [
        {
          purpose_id: 'marketing_email',
          purpose: 'Send me the monthly newsletter',
          purpose_description: 'One e-mail a month about new features and offers. Unsubscribe at any time.',
          lawful_basis: 'consent',
          mechanism: 'explicit',
        },
        {
          purpose_id: 'product_analytics',
          purpose: 'Measure how the newsletter is read',
          purpose_description: 'Open and click counts, kept for 13 months.',
          lawful_basis: 'legitimate_interest',
          mechanism: 'opt_out',
        },
      ],
      storage_locations: ['DE'],
      withdrawal_method: 'http://127.0.0.1:3000/receipts/rec_01hv3k9m2q8x7c4n5b6z/withdraw',
      recipient_third_parties: ['mailer-co'],
      privacy_rights: { access: 'http://127.0.0.1:3000/me/records', export: 'http://127.0.0.1:3000/me/records/export' },
      impact_assessment: 'lia_newsletter_analytics_2025',
    });
    expect(frozen.pii_processing).not.toHaveProperty('processing_method');
    expect(frozen.pii_processing).not.toHaveProperty('processing_locations');
  });

  it('identifies the controller (declared), the platform processor, the authority and the recipients', () => {
    expect(frozen.party_identification).toEqual([
      {
        party_id: APPLICATION_ID,
        party_name: 'Acme Publishing GmbH',
        party_role: 'controller',
        party_type: 'organization',
        provenance: 'declared',
        party_address: 'Friedrichstraße 1, 10117 Berlin, Germany',
        party_email: 'privacy@acme.example',
        party_phone: '+49 30 1234567',
        party_url: 'https://acme.example/contact',
      },
      {
        party_id: 'decision-service',
        party_name: 'Decision Service Ltd',
        party_role: 'processor',
        party_type: 'organization',
        party_email: 'privacy@decision-service.dev',
        party_url: 'https://decision-service.dev',
      },
      {
        party_id: 'de-bfdi',
        party_name: 'Der Bundesbeauftragte für den Datenschutz und die Informationsfreiheit',
        party_role: 'supervisory_authority',
        party_type: 'organization',
        party_url: 'https://www.bfdi.bund.de',
      },
      { party_id: 'mailer-co', party_name: 'Mailer Co. Ltd', party_role: 'recipient', party_type: 'organization', provenance: 'declared', party_url: 'https://mailer.example' },
    ]);
  });

  it('freezes notice shown, consent requested and consent given in canonical order, from evidence', () => {
    expect(frozen.event).toEqual([
      { event_time: '2025-03-01T09:58:03.120Z', entity_id: APPLICATION_ID, event_type: 'regular', event_state: 'notice shown' },
      { event_time: '2025-03-01T09:58:00Z', entity_id: APPLICATION_ID, event_type: 'regular', event_state: 'consent requested' },
      { event_time: '2025-03-01T10:00:00Z', validity_duration: 'P1Y', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'consent given' },
    ]);
  });

  it('writes the extensions it knows and nothing else', () => {
    expect(frozen.extensions).toEqual({
      collection_mechanism: 'standard',
      delivery_mode: 'redirect',
      consent_flow_id: FLOW_ID,
      collection_channel: 'hosted',
      captured_at: '2025-03-01T10:00:00Z',
      recorded_at: '2025-03-01T10:00:00.250Z',
    });
  });

  it('never mutates its input', () => {
    const frozenInput = deepFreeze(hostedConsentInput());
    expect(freezeAndRead(frozenInput)).toEqual(frozen);
  });

  it('freezes the same receipt with a notice memo, for every input kind and on repeated use', () => {
    const notices = new NoticeMemo();
    for (const make of [hostedConsentInput, importedRecordInput, anonymousFieldInput]) {
      const input = make();
      expect(freezeConsentReceipt(input, { notices })).toEqual(freezeConsentReceipt(input));
      expect(freezeConsentReceipt(input, { notices })).toEqual(freezeConsentReceipt(input));
    }
  });

  it('is plain JSON that survives a round trip through storage', () => {
    expect(JSON.parse(JSON.stringify(frozen))).toEqual(frozen);
  });

  it('does not keep references into its input', () => {
    const again = hostedConsentInput();
    const result = freezeAndRead(again);
    again.application.recipients = [];
    (again.privacyRights as { access: string }).access = 'https://changed.example';
    expect(result.pii_processing.recipient_third_parties).toEqual(['mailer-co']);
    expect(result.pii_processing.privacy_rights?.access).toBe('http://127.0.0.1:3000/me/records');
  });
});

describe('freezeConsentReceipt: an anonymous decision in the consent field', () => {
  const frozen = freezeAndRead(anonymousFieldInput());

  it('names no withdrawal entry: the records page finds a person by their e-mail address, and there is no person', () => {
    const offered = freezeAndRead({ ...anonymousFieldInput(), withdrawalUrl: 'http://127.0.0.1:3000/inbox/records?application_id=tp_dev_0123456789abcdef' });
    expect(offered.pii_processing.withdrawal_method).toBeUndefined();
    expect(freezeAndRead({ ...importedRecordInput(), withdrawalUrl: 'http://127.0.0.1:3000/inbox/records' }).pii_processing.withdrawal_method).toBe('http://127.0.0.1:3000/inbox/records');
  });

  it('emits anonymous: true and no principal id; the record id is the actor', () => {
    expect(frozen.record).toEqual({
      schema_version: 'service-cr/2.13',
      conforms_to: 'ISO/IEC TS 27560:2023',
      record_id: 'rec_01hv3kanon0000000001',
      record_type: 'consent_record',
      anonymous: true,
    });
    expect(frozen.event.slice(2)).toEqual([
      { event_time: '2025-03-02T08:15:30Z', validity_duration: 'P1Y', entity_id: 'rec_01hv3kanon0000000001', event_type: 'explicit', event_state: 'consent given' },
      // The analytics box unticked: the objection, by the person (the record id here), when they decided.
      { event_time: '2025-03-02T08:15:30Z', entity_id: 'rec_01hv3kanon0000000001', event_type: 'explicit', event_state: 'objection recorded', purpose_id: 'product_analytics' },
    ]);
  });

  it('leaves out what was not stated: objected purpose, recipients, delivery mode', () => {
    expect(frozen.pii_processing.purposes.map((p) => p.purpose_id)).toEqual(['marketing_email']);
    expect(frozen.pii_processing.language).toBe('en-GB');
    for (const absent of ['recipient_third_parties', 'withdrawal_method', 'privacy_rights', 'impact_assessment', 'processing_locations']) {
      expect(frozen.pii_processing).not.toHaveProperty(absent);
    }
    expect(frozen.party_identification.map((p) => p.party_role)).toEqual(['controller', 'processor']);
    expect(frozen.party_identification[0]).toEqual({ party_id: APPLICATION_ID, party_name: 'Acme Newsletter', party_role: 'controller', provenance: 'display_name' });
    expect(frozen.extensions).not.toHaveProperty('delivery_mode');
  });

  it("freezes notice shown and consent requested at the field's render time, by the application, before the decision", () => {
    expect(frozen.event.map((event) => [event.event_state, event.event_time, event.entity_id])).toEqual([
      ['notice shown', '2025-03-02T08:14:02Z', APPLICATION_ID],
      ['consent requested', '2025-03-02T08:14:02Z', APPLICATION_ID],
      ['consent given', '2025-03-02T08:15:30Z', 'rec_01hv3kanon0000000001'],
      ['objection recorded', '2025-03-02T08:15:30Z', 'rec_01hv3kanon0000000001'],
    ]);
    // The organisation's own form: the service saw no notice shown, whatever evidence is claimed.
    const own = anonymousFieldInput();
    own.decision.channel = 'form_capture_browser';
    delete own.evidence!.renderingEvidence;
    expect(freezeAndRead(own).event.map((event) => event.event_state)).toEqual(['consent given', 'objection recorded']);
  });

  it('keeps the field evidence', () => {
    expect(frozen.extensions.collection_channel).toBe('embedded_field_browser');
    expect(frozen.extensions.wording_drift).toEqual({ marketing_email: 'match', product_analytics: 'drift' });
    expect(frozen.extensions.rendering_evidence).toHaveLength(1);
    expect(frozen.pii_processing.collection_method).toMatch(/committed by the browser/);
  });

  it("writes a configured party's URL as an RFC 3986 URI (configuration takes any https URL; the schema refused it)", () => {
    const input = anonymousFieldInput();
    input.processor = { ...input.processor, url: 'https://dienstleister.example/über-uns' };
    const processor = freezeAndRead(input).party_identification.find((party) => party.party_role === 'processor');
    expect(processor?.party_url).toBe('https://dienstleister.example/%C3%BCber-uns');
  });

  it('states no wording_drift for a verdict on no purpose (the schema asks for one at least)', () => {
    const input = anonymousFieldInput();
    input.evidence = { ...input.evidence, wordingVerdict: {} };
    expect(freezeAndRead(input).extensions).not.toHaveProperty('wording_drift');
  });
});

describe('freezeConsentReceipt: an imported record', () => {
  const frozen = freezeAndRead(importedRecordInput());

  it('keeps the original capture time as given time and captured_at, and the commit as recorded_at', () => {
    expect(frozen.extensions.captured_at).toBe('2023-06-15T12:00:00Z');
    expect(frozen.extensions.recorded_at).toBe('2025-03-03T16:20:00Z');
    expect(Date.parse(frozen.extensions.captured_at!)).toBeLessThan(Date.parse(frozen.extensions.recorded_at!));
    expect(frozen.event).toEqual([
      { event_time: '2023-06-15T12:00:00Z', validity_duration: 'P1Y', entity_id: 'sub_k1l2m3n4o5p6q7r8s9t0', event_type: 'explicit', event_state: 'consent given' },
    ]);
    expect(frozen.extensions.collection_channel).toBe('imported');
    // The organisation's word on how both boxes were shown: the service saw neither.
    expect(frozen.extensions.presentation_attested).toEqual(['marketing_email', 'product_analytics']);
  });

  it('asserts nothing is shared with an empty recipients list', () => {
    expect(frozen.pii_processing.recipient_third_parties).toEqual([]);
    expect(frozen.party_identification.filter((p) => p.party_role === 'recipient')).toEqual([]);
  });

  it('writes no impact assessment without exactly one active assessment', () => {
    expect(frozen.pii_processing).not.toHaveProperty('impact_assessment');
    const two = freezeAndRead({ ...importedRecordInput(), legitimateInterestAssessments: ['lia_1', 'lia_2'] });
    expect(two.pii_processing).not.toHaveProperty('impact_assessment');
    const one = freezeAndRead({ ...importedRecordInput(), legitimateInterestAssessments: ['lia_1'] });
    expect(one.pii_processing.impact_assessment).toBe('lia_1');
  });
});

describe('freezeConsentReceipt: decisions', () => {
  it('distinguishes absent recipients (not enumerable) from an empty list (nothing shared)', () => {
    const absent = freezeAndRead(withInput((i) => delete i.application.recipients));
    const empty = freezeAndRead(withInput((i) => (i.application.recipients = [])));
    expect(absent.pii_processing).not.toHaveProperty('recipient_third_parties');
    expect(empty.pii_processing.recipient_third_parties).toEqual([]);
    expect(absent.party_identification.some((p) => p.party_role === 'recipient')).toBe(false);
  });

  it('writes unspecified when the flow names no jurisdiction, and no duration when it declares none', () => {
    const terms = normaliseFlowTerms({ ...NEWSLETTER_FLOW_BODY, jurisdiction: null, consent_duration: null });
    const frozen = freezeAndRead(withInput((i) => (i.flow.terms = terms)));
    expect(frozen.pii_processing.jurisdiction).toBe('unspecified');
    expect(frozen.event.find((e) => e.event_state === 'consent given')).not.toHaveProperty('validity_duration');
  });

  it('writes the presented locale and fingerprints the notice in it', () => {
    const de = freezeAndRead(withInput((i) => (i.decision.locale = 'de')));
    const en = freezeAndRead(hostedConsentInput());
    expect(de.pii_processing.language).toBe('de');
    expect(de.pii_processing.privacy_notice?.hash).not.toBe(en.pii_processing.privacy_notice?.hash);
    const flowLocale = freezeAndRead(withInput((i) => delete i.decision.locale));
    expect(flowLocale.pii_processing.language).toBe('en-GB');
  });

  it('writes a session in direct mode as link, and informed flows as informed', () => {
    const terms = normaliseFlowTerms({ ...NEWSLETTER_FLOW_BODY, pattern: 'informed' });
    const frozen = freezeAndRead(withInput((i) => { i.decision.deliveryMode = 'direct'; i.flow.terms = terms; }));
    expect(frozen.extensions.delivery_mode).toBe('link');
    expect(frozen.extensions.collection_mechanism).toBe('informed');
    expect(frozen.pii_processing.collection_method).toMatch(/^Informed consent flow/);
  });

  it('records the predecessor on the given event when re-affirming', () => {
    const frozen = freezeAndRead(withInput((i) => (i.decision.supersedes = 'rec_01hv3k000000000000')));
    expect(frozen.event.at(-1)).toMatchObject({ event_state: 'consent given', record_reference: 'rec_01hv3k000000000000' });
  });

  it('marks a grant resting only on legitimate interest as implicit', () => {
    const frozen = freezeAndRead(withInput((i) => (i.decision.purposeStatuses = { marketing_email: 'declined', product_analytics: 'noticed' })));
    expect(frozen.pii_processing.purposes.map((p) => p.purpose_id)).toEqual(['product_analytics']);
    expect(frozen.event.at(-1)).toMatchObject({ event_state: 'consent given', event_type: 'implicit' });
  });

  it('freezes a notice record when nothing is granted: notice shown and acknowledged, never consent given', () => {
    const declined = freezeAndRead(withInput((i) => {
      i.decision.outcome = 'declined';
      i.decision.purposeStatuses = { marketing_email: 'declined', product_analytics: 'objected', terms_of_service: 'noticed' };
    }));
    expect(declined.record.record_type).toBe('notice_record');
    expect(declined.pii_processing.purposes).toEqual([]);
    expect(declined.event.map((e) => e.event_state)).toEqual(['notice shown', 'notice acknowledged', 'objection recorded']);
    expect(declined.event[1]).toEqual({ event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'notice acknowledged' });

    const noticeOnly = normaliseFlowTerms({ name: 'Terms', pattern: 'standard', purposes: ['terms_of_service'], purpose_definitions: { terms_of_service: { basis: 'contract', required: true } } });
    const notice = freezeAndRead(withInput((i) => {
      i.flow.terms = noticeOnly;
      i.decision.purposeStatuses = { terms_of_service: 'noticed' };
    }));
    expect(notice.record.record_type).toBe('notice_record');
    expect(notice.event.some((e) => e.event_state === 'consent given')).toBe(false);
  });

  it('writes stated evidence: scopes, sensitive, disclosures, signature evidence, form platform', () => {
    const frozen = freezeAndRead(withInput((i) => {
      i.decision.channel = 'form_platform_webhook';
      delete i.decision.deliveryMode;
      i.evidence = {
        scopes: ['openid', 'email'],
        sensitive: true,
        collectionPlatform: 'typeform',
        agentDisclosures: [{ agent_id: 'agt_1' }],
        signatureEvidence: [{ pointer: 'env_1', digest: 'f'.repeat(64), completed_at: '2025-03-01T09:59:00Z' }],
      };
    }));
    expect(frozen.extensions).toMatchObject({
      scopes: ['openid', 'email'],
      sensitive: true,
      collection_platform: 'typeform',
      agent_disclosures: [{ agent_id: 'agt_1' }],
      signature_evidence: [{ pointer: 'env_1' }],
      collection_channel: 'form_platform_webhook',
    });
  });
});

describe('freezeConsentReceipt: objections', () => {
  it('records each purpose objected to as an objection recorded event, on a consent record and on a notice record', () => {
    const twoObjections = normaliseFlowTerms({
      ...NEWSLETTER_FLOW_BODY,
      purposes: [...NEWSLETTER_FLOW_BODY.purposes, 'fraud_prevention'],
      purpose_definitions: { ...NEWSLETTER_FLOW_BODY.purpose_definitions, fraud_prevention: { label: 'Check sign-ups for fraud', basis: 'legitimate_interest' } },
    });
    const consent = freezeAndRead(withInput((i) => {
      i.flow.terms = twoObjections;
      i.decision.channel = 'controller_attested';
      delete i.decision.deliveryMode;
      delete i.decision.noticeShownAt;
      delete i.decision.requestedAt;
      i.decision.purposeStatuses = { marketing_email: 'granted', product_analytics: 'objected', terms_of_service: 'noticed', fraud_prevention: 'objected' };
    }));
    expect(consent.record.record_type).toBe('consent_record');
    // Never among the granted purposes; each objection names its purpose, in flow order, after the given event.
    expect(consent.pii_processing.purposes.map((p) => p.purpose_id)).toEqual(['marketing_email']);
    expect(consent.event).toEqual([
      { event_time: '2025-03-01T10:00:00Z', validity_duration: 'P1Y', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'consent given' },
      { event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'objection recorded', purpose_id: 'product_analytics' },
      { event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'objection recorded', purpose_id: 'fraud_prevention' },
    ]);

    const notice = freezeAndRead(withInput((i) => {
      i.decision.outcome = 'declined';
      i.decision.purposeStatuses = { marketing_email: 'declined', product_analytics: 'objected', terms_of_service: 'noticed' };
    }));
    expect(notice.record.record_type).toBe('notice_record');
    expect(notice.event.at(-1)).toEqual({ event_time: '2025-03-01T10:00:00Z', entity_id: 'sub_a1b2c3d4e5f6g7h8i9j0', event_type: 'explicit', event_state: 'objection recorded', purpose_id: 'product_analytics' });
    expect(notice.event.at(-1)).not.toHaveProperty('event_channel');
  });

  it('records no objection where none was made: a purpose noticed, left out, or not presented', () => {
    expect(freezeAndRead(hostedConsentInput()).event.some((e) => e.event_state === 'objection recorded')).toBe(false);
    const silent = freezeAndRead(withInput((i) => (i.decision.purposeStatuses = { marketing_email: 'granted' })));
    expect(silent.event.some((e) => e.event_state === 'objection recorded')).toBe(false);
  });
});

describe('freezeConsentReceipt: presentation_attested', () => {
  const onChannel = (channel: FrozenReceiptInput['decision']['channel']) =>
    freezeAndRead(withInput((i) => {
      i.decision.channel = channel;
      delete i.decision.deliveryMode;
    }));

  it.each(['controller_attested', 'form_capture', 'form_capture_browser', 'form_platform_webhook', 'imported'] as const)(
    'lists the purposes taking a decision on %s, whose presentation the organisation attested',
    (channel) => {
      expect(onChannel(channel).extensions.presentation_attested).toEqual(['marketing_email', 'product_analytics']);
    },
  );

  it.each(['hosted', 'embedded', 'embedded_field', 'embedded_field_browser'] as const)('is absent on %s: the service rendered the control', (channel) => {
    expect(onChannel(channel).extensions).not.toHaveProperty('presentation_attested');
  });

  it('lists only purposes the record holds a decision for, and nothing for a flow without decisions', () => {
    const some = freezeAndRead(withInput((i) => {
      i.decision.channel = 'form_capture';
      delete i.decision.deliveryMode;
      i.decision.purposeStatuses = { marketing_email: 'granted' };
    }));
    expect(some.extensions.presentation_attested).toEqual(['marketing_email']);
    const noticeOnly = normaliseFlowTerms({ name: 'Terms', pattern: 'standard', purposes: ['terms_of_service'], purpose_definitions: { terms_of_service: { basis: 'contract', required: true } } });
    const none = freezeAndRead(withInput((i) => {
      i.flow.terms = noticeOnly;
      i.decision.channel = 'imported';
      delete i.decision.deliveryMode;
      i.decision.purposeStatuses = { terms_of_service: 'noticed' };
    }));
    expect(none.extensions).not.toHaveProperty('presentation_attested');
  });

  it('lists only the purposes whose presentation was stated, when the record says which (an import row may leave the flags out)', () => {
    const stated = (keys: string[]) =>
      freezeAndRead(withInput((i) => {
        i.decision.channel = 'imported';
        delete i.decision.deliveryMode;
        i.decision.presentationStated = keys;
      }));
    expect(stated(['product_analytics']).extensions.presentation_attested).toEqual(['product_analytics']);
    expect(stated([]).extensions).not.toHaveProperty('presentation_attested');
  });
});

describe('freezeConsentReceipt refuses inputs that break a rule, naming each field', () => {
  const cases: Array<[string, (input: FrozenReceiptInput) => void, string]> = [
    ['a time that is not UTC', (i) => (i.decision.decidedAt = '2025-03-01T11:00:00+01:00'), 'decision.decidedAt'],
    ['a time that is no time', (i) => (i.decision.requestedAt = 'yesterday'), 'decision.requestedAt'],
    ['a record id of the wrong shape', (i) => (i.recordId = 'rec with spaces'), 'recordId'],
    ['an unknown channel', (i) => (i.decision.channel = 'fax' as never), 'decision.channel'],
    ['a storage country that is no ISO code', (i) => (i.storageCountry = 'Germany'), 'storageCountry'],
    ['a person declared as recipient', (i) => (i.application.recipients = [{ id: 'p', name: 'Pat', partyType: 'natural_person' as never }]), 'application.recipients[0].partyType'],
    ['a recipient id that collides with a party', (i) => (i.application.recipients = [{ id: 'decision-service', name: 'X' }]), 'application.recipients[0].id'],
    ['rendering evidence on a hosted decision', (i) => (i.evidence = { renderingEvidence: [{ renderer: 'x' }] }), 'evidence.renderingEvidence'],
    ['a form platform on a hosted decision', (i) => (i.evidence = { collectionPlatform: 'typeform' }), 'evidence.collectionPlatform'],
    ['a status for an unknown purpose', (i) => (i.decision.purposeStatuses = { nope: 'granted' }), 'statuses.nope'],
    [
      'signature evidence on a notice record',
      (i) => {
        i.decision.outcome = 'declined';
        i.decision.purposeStatuses = { marketing_email: 'declined', product_analytics: 'objected' };
        i.evidence = { signatureEvidence: [{ pointer: 'x' }] };
      },
      'evidence.signatureEvidence',
    ],
  ];

  it.each(cases)('%s', (_name, change, field) => {
    const error = refusal(() => freezeConsentReceipt(withInput(change)));
    expect(error.code).toBe('validation_failed');
    expect(error.details!.map((d) => d.field)).toContain(field);
  });
});
