import fc from 'fast-check';
import { LEGAL_BASES, LegalBasis, MECHANISMS_BY_BASIS, normaliseFlowTerms, PurposeStatus } from '@dcr/domain';
import type { DeclaredRecipient, FrozenReceipt, FrozenReceiptInput, LifecycleFact } from '../builder';
import { COLLECTION_CHANNELS, RECEIPT_EVENT_CHANNELS } from '../schema';
import { APPLICATION_ID, FLOW_ID, PLATFORM_PROCESSOR, SUPERVISORY_AUTHORITY } from './fixtures';

/*
 * fast-check arbitraries of valid receipt-builder inputs (for the property "every valid input gives a
 * schema-valid receipt").
 */

const START = Date.UTC(2020, 0, 1);
const END = Date.UTC(2030, 0, 1);

/** An ISO 8601 UTC time, with or without milliseconds. */
export function utcTimeBetween(min: number, max: number): fc.Arbitrary<string> {
  return fc.tuple(fc.integer({ min, max }), fc.boolean()).map(([ms, whole]) => {
    const text = new Date(whole ? Math.floor(ms / 1000) * 1000 : ms).toISOString();
    return whole ? text.replace('.000Z', 'Z') : text;
  });
}

const purposeKey = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const text = (max: number) => fc.string({ minLength: 1, maxLength: max }).filter((s) => s.trim().length > 0);
const duration = fc.oneof(
  fc.constantFrom('P1Y', 'P6M', 'P30D', 'P2W', 'PT12H', 'P1Y2M3DT4H5M6S', 'PT90S'),
  fc.integer({ min: 1, max: 400 }).map((days) => `P${days}D`),
);

const purposeDefinition = fc.constantFrom(...LEGAL_BASES).chain((basis: LegalBasis) =>
  fc.record(
    {
      basis: fc.constant(basis),
      mechanism: fc.constantFrom(...MECHANISMS_BY_BASIS[basis]),
      label: text(40),
      description: text(80),
      required: MECHANISMS_BY_BASIS[basis][0] === 'notice' ? fc.boolean() : fc.constant(false),
    },
    { requiredKeys: ['basis'] },
  ),
);

/** A flow body `normaliseFlowTerms` accepts. */
export const flowBodyArbitrary = fc
  .uniqueArray(purposeKey, { minLength: 1, maxLength: 6 })
  .chain((keys) =>
    fc.record(
      {
        name: fc.constant('Generated flow'),
        pattern: fc.constantFrom('standard', 'informed'),
        purposes: fc.constant(keys),
        purpose_definitions: fc.tuple(...keys.map(() => fc.option(purposeDefinition, { nil: undefined }))).map((definitions) =>
          Object.fromEntries(keys.flatMap((key, index) => (definitions[index] ? [[key, definitions[index]]] : []))),
        ),
        locale: fc.constantFrom('en', 'de', 'en-GB', 'fr-CA', 'zh-Hant-TW', 'es-419'),
        title: text(60),
        description: text(200),
        policy_url: fc.constantFrom('https://acme.example/privacy', 'http://localhost/policy', 'https://example.org/p?v=2'),
        jurisdiction: fc.constantFrom('EU', 'US-CA', 'Germany', 'GB'),
        consent_duration: duration,
      },
      { requiredKeys: ['name', 'pattern', 'purposes'] },
    ),
  );

function statusesFor(terms: ReturnType<typeof normaliseFlowTerms>): fc.Arbitrary<Record<string, PurposeStatus>> {
  const entries = terms.purposes.map((purpose) => {
    const allowed: PurposeStatus[] = !purpose.takes_decision
      ? ['noticed']
      : purpose.basis === 'legitimate_interest'
        ? ['noticed', 'objected']
        : ['granted', 'declined'];
    return fc.option(fc.constantFrom(...allowed), { nil: undefined }).map((status) => [purpose.key, status] as const);
  });
  return fc
    .tuple(...entries)
    .map((pairs) => Object.fromEntries(pairs.filter(([, status]) => status !== undefined)) as Record<string, PurposeStatus>);
}

const recipientArbitrary = (index: number): fc.Arbitrary<DeclaredRecipient> =>
  fc.record(
    {
      id: fc.constant(`recipient-${index}`),
      name: text(40),
      partyType: fc.constantFrom('organization' as const, 'software_agent' as const),
      url: fc.constant(`https://recipient-${index}.example`),
      email: fc.constant(`privacy@recipient-${index}.example`),
    },
    { requiredKeys: ['id', 'name'] },
  );

const openEntry = fc.dictionary(fc.stringMatching(/^[a-z_]{1,12}$/), fc.jsonValue(), { minKeys: 1, maxKeys: 4 });

/** Valid FrozenReceiptInput values over the whole input space (channels, subjects, optional facts). */
/** Everything of an input but the flow and its statuses (built once: arbitraries are costly to build). */
const inputFacts = fc.record({
  recordId: fc.stringMatching(/^rec_[0-9a-z]{12,24}$/),
  anonymous: fc.boolean(),
  subjectId: fc.stringMatching(/^sub_[0-9a-z]{20}$/),
  outcome: fc.constantFrom('granted' as const, 'declined' as const),
  channel: fc.constantFrom(...COLLECTION_CHANNELS),
  deliveryMode: fc.option(fc.constantFrom('embed' as const, 'popup' as const, 'redirect' as const, 'direct' as const), { nil: undefined }),
  times: fc.uniqueArray(utcTimeBetween(START, END), { minLength: 4, maxLength: 4 }).map((list) => [...list].sort((a, b) => Date.parse(a) - Date.parse(b))),
  hasRequested: fc.boolean(),
  hasNoticeShown: fc.boolean(),
  locale: fc.option(fc.constantFrom('en', 'de-DE', 'fr'), { nil: undefined }),
  declared: fc.option(
    fc.record(
      {
        legalName: text(60),
        partyType: fc.constantFrom('organization' as const, 'natural_person' as const),
        address: text(80),
        email: fc.constant('privacy@controller.example'),
        phone: fc.constant('+1 (555) 010-0000'),
        url: fc.constant('https://controller.example'),
      },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  ),
  recipientCount: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  recipients: fc.tuple(recipientArbitrary(0), recipientArbitrary(1), recipientArbitrary(2)),
  storageCountry: fc.constantFrom('US', 'DE', 'FR', 'GB'),
  withAuthority: fc.boolean(),
  withdrawalUrl: fc.option(fc.constant('https://api.example/receipts/withdraw'), { nil: undefined }),
  privacyRights: fc.option(fc.record({ access: fc.constant('https://api.example/me'), export: fc.constant('https://api.example/me/export') }, { requiredKeys: ['access'] }), { nil: undefined }),
  processingLocations: fc.option(fc.uniqueArray(fc.constantFrom('US', 'DE', 'GB', 'US-CA'), { minLength: 1 }), { nil: undefined }),
  assessments: fc.option(fc.uniqueArray(fc.stringMatching(/^lia_[a-z0-9]{4,8}$/), { minLength: 0, maxLength: 2 }), { nil: undefined }),
  supersedes: fc.option(fc.stringMatching(/^rec_[0-9a-z]{12}$/), { nil: undefined }),
  scopes: fc.option(fc.uniqueArray(fc.constantFrom('openid', 'email', 'profile'), { minLength: 0 }), { nil: undefined }),
  sensitive: fc.option(fc.boolean(), { nil: undefined }),
  wording: fc.option(fc.constantFrom('match' as const, 'drift' as const), { nil: undefined }),
  rendering: fc.option(fc.array(openEntry, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  platform: fc.option(fc.constantFrom('typeform', 'tally', 'jotform'), { nil: undefined }),
  disclosures: fc.option(fc.array(openEntry, { minLength: 1, maxLength: 2 }), { nil: undefined }),
});

export const frozenReceiptInputArbitrary: fc.Arbitrary<FrozenReceiptInput> = flowBodyArbitrary.chain((body) => {
  const terms = normaliseFlowTerms(body);
  return fc
    .tuple(inputFacts, statusesFor(terms))
    .map(([facts, statuses]): FrozenReceiptInput => {
      const g = { ...facts, statuses };
      const wording = g.wording;
      const [requestedAt, noticeShownAt, decidedAt, recordedAt] = g.times;
      const rendersField = g.channel === 'embedded_field' || g.channel === 'embedded_field_browser';
      const decisionKeys = terms.purposes.filter((p) => p.takes_decision).map((p) => p.key);
      return {
        recordId: g.recordId,
        flow: { id: FLOW_ID, terms },
        subject: g.anonymous ? { anonymous: true } : { id: g.subjectId },
        decision: {
          outcome: g.outcome,
          purposeStatuses: g.statuses,
          ...(g.locale !== undefined && { locale: g.locale }),
          channel: g.channel,
          ...(g.deliveryMode !== undefined && { deliveryMode: g.deliveryMode }),
          ...(g.hasRequested && { requestedAt }),
          ...(g.hasNoticeShown && { noticeShownAt }),
          decidedAt,
          recordedAt,
          ...(g.supersedes !== undefined && { supersedes: g.supersedes }),
        },
        application: {
          id: APPLICATION_ID,
          name: 'Generated application',
          ...(g.declared !== undefined && { declared: g.declared }),
          ...(g.recipientCount !== undefined && { recipients: g.recipients.slice(0, g.recipientCount) }),
        },
        storageCountry: g.storageCountry,
        processor: PLATFORM_PROCESSOR,
        ...(g.withAuthority && { supervisoryAuthority: SUPERVISORY_AUTHORITY }),
        ...(g.withdrawalUrl !== undefined && { withdrawalUrl: g.withdrawalUrl }),
        ...(g.privacyRights !== undefined && { privacyRights: g.privacyRights }),
        ...(g.processingLocations !== undefined && { processingLocations: g.processingLocations }),
        ...(g.assessments !== undefined && { legitimateInterestAssessments: g.assessments }),
        evidence: {
          ...(g.scopes !== undefined && { scopes: g.scopes }),
          ...(g.sensitive !== undefined && { sensitive: g.sensitive }),
          ...(wording !== undefined && decisionKeys.length > 0 && { wordingVerdict: Object.fromEntries(decisionKeys.map((key) => [key, wording])) }),
          ...(g.rendering !== undefined && rendersField && { renderingEvidence: g.rendering }),
          ...(g.platform !== undefined && g.channel === 'form_platform_webhook' && { collectionPlatform: g.platform }),
          ...(g.disclosures !== undefined && { agentDisclosures: g.disclosures }),
        },
      };
    });
});

/** Withdrawal and objection facts that fit a frozen record: after the decision, for its granted purposes. */
export function lifecycleArbitrary(frozen: FrozenReceipt): fc.Arbitrary<LifecycleFact[]> {
  if ((frozen.record.record_type ?? 'consent_record') !== 'consent_record') return fc.constant([]);
  const decided = Date.parse(frozen.extensions.captured_at ?? frozen.event[frozen.event.length - 1].event_time);
  const purposeIds = frozen.pii_processing.purposes.map((purpose) => purpose.purpose_id);
  const fact: fc.Arbitrary<LifecycleFact> = fc.record(
    {
      kind: fc.constant('withdrawal' as const),
      at: utcTimeBetween(decided, decided + 5 * 365 * 86_400_000),
      purposeId: fc.constantFrom(...purposeIds),
      channel: fc.constantFrom(...RECEIPT_EVENT_CHANNELS),
    },
    { requiredKeys: ['kind', 'at'] },
  );
  // An objection since the decision, to a legitimate-interest purpose the record lets stand.
  const standing = frozen.pii_processing.purposes.filter((purpose) => purpose.lawful_basis === 'legitimate_interest').map((purpose) => purpose.purpose_id);
  const objection: fc.Arbitrary<LifecycleFact> | undefined =
    standing.length === 0
      ? undefined
      : fc.record(
          {
            kind: fc.constant('objection' as const),
            at: utcTimeBetween(decided, decided + 5 * 365 * 86_400_000),
            purposeId: fc.constantFrom(...standing),
            channel: fc.constantFrom(...RECEIPT_EVENT_CHANNELS),
          },
          { requiredKeys: ['kind', 'at', 'purposeId'] },
        );
  return fc.array(objection ? fc.oneof(fact, objection) : fact, { maxLength: 4 });
}
