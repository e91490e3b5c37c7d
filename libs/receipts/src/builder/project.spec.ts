import { DomainError, normaliseFlowTerms } from '@dcr/domain';
import {
  anonymousFieldInput,
  deepFreeze,
  expectSchemaValid,
  hostedConsentInput,
  importedRecordInput,
  NEWSLETTER_FLOW_BODY,
  SCHEMA_URL_BASE,
} from '../testing';
import { FrozenReceipt, freezeConsentReceipt } from './freeze';
import { consentExpiresAt, LifecycleFact, projectReceipt } from './project';
import { receiptStatus } from './status';

const SUBJECT = 'sub_a1b2c3d4e5f6g7h8i9j0';

/** The hosted fixture, frozen at every depth so any mutation by a projection throws. */
function frozenHosted(): FrozenReceipt {
  return deepFreeze(freezeConsentReceipt(hostedConsentInput()));
}

function read(frozen: FrozenReceipt, lifecycle: LifecycleFact[], now?: string) {
  const receipt = projectReceipt(frozen, lifecycle, { schemaUrl: SCHEMA_URL_BASE, ...(now !== undefined && { now }) });
  expectSchemaValid(receipt);
  return receipt;
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

describe('projectReceipt', () => {
  it('adds $schema and keeps the frozen sections as they are', () => {
    const frozen = frozenHosted();
    const snapshot = JSON.parse(JSON.stringify(frozen));
    const receipt = read(frozen, []);
    expect(Object.keys(receipt)).toEqual(['$schema', 'record', 'pii_processing', 'party_identification', 'event', 'extensions']);
    expect(receipt.$schema).toBe('http://127.0.0.1:3000/schemas/receipt/v2/record.json');
    const { $schema, ...rest } = receipt;
    expect($schema).toBeDefined();
    expect(rest).toEqual(snapshot);
    expect(frozen).toEqual(snapshot);
  });

  it('accepts the schema URL as a base, with a trailing slash, or in full', () => {
    const frozen = frozenHosted();
    for (const schemaUrl of ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/', 'http://127.0.0.1:3000/schemas/receipt/v2/record.json']) {
      const receipt = projectReceipt(frozen, [], { schemaUrl });
      expectSchemaValid(receipt);
      expect(receipt.$schema).toBe('http://127.0.0.1:3000/schemas/receipt/v2/record.json');
    }
  });

  it('never mutates the frozen part, and hands out a copy that does not share it', () => {
    const frozen = frozenHosted();
    const snapshot = JSON.parse(JSON.stringify(frozen));
    const receipt = read(frozen, [{ kind: 'withdrawal', at: '2025-05-01T00:00:00Z', purposeId: 'marketing_email', channel: 'receipt_link' }], '2027-01-01T00:00:00Z');
    expect(frozen).toEqual(snapshot);
    receipt.pii_processing!.purposes.pop();
    receipt.event[0].entity_id = 'changed';
    expect(frozen).toEqual(snapshot);
  });

  it('appends withdrawals after the frozen events, in time order, never rewriting pii_processing', () => {
    const frozen = frozenHosted();
    const receipt = read(frozen, [
      { kind: 'withdrawal', at: '2025-06-01T00:00:00Z', purposeId: 'product_analytics', channel: 'mailing_tool' },
      { kind: 'withdrawal', at: '2025-04-01T08:30:00Z', purposeId: 'marketing_email', channel: 'email_link' },
    ]);
    expect(receipt.event.slice(0, 3)).toEqual(frozen.event);
    expect(receipt.event.slice(3)).toEqual([
      { event_time: '2025-04-01T08:30:00Z', entity_id: SUBJECT, event_type: 'explicit', event_state: 'consent withdrawn', purpose_id: 'marketing_email', event_channel: 'email_link' },
      { event_time: '2025-06-01T00:00:00Z', entity_id: SUBJECT, event_type: 'explicit', event_state: 'consent withdrawn', purpose_id: 'product_analytics', event_channel: 'mailing_tool' },
    ]);
    expect(receipt.pii_processing).toEqual(frozen.pii_processing);
  });

  it('writes a whole withdrawal without purpose_id, and without a channel when unknown', () => {
    const receipt = read(frozenHosted(), [{ kind: 'withdrawal', at: '2025-04-01T00:00:00Z' }]);
    expect(receipt.event.at(-1)).toEqual({ event_time: '2025-04-01T00:00:00Z', entity_id: SUBJECT, event_type: 'explicit', event_state: 'consent withdrawn' });
    expect(receiptStatus(receipt)).toBe('withdrawn');
  });

  it('types withdrawals by who made them', () => {
    const channels = ['newer_record', 'organisation', 'subject_sweep'] as const;
    const receipt = read(frozenHosted(), channels.map((channel, index) => ({ kind: 'withdrawal', at: `2025-04-0${index + 1}T00:00:00Z`, purposeId: 'marketing_email', channel })));
    expect(receipt.event.slice(3).map((e) => [e.event_channel, e.event_type])).toEqual([
      ['newer_record', 'implicit'],
      ['organisation', 'regular'],
      ['subject_sweep', 'regular'],
    ]);
  });

  it('uses the record id as the actor on anonymous records', () => {
    const frozen = deepFreeze(freezeConsentReceipt(anonymousFieldInput()));
    const receipt = read(frozen, [{ kind: 'withdrawal', at: '2025-04-01T00:00:00Z', channel: 'receipt_link' }]);
    expect(receipt.event.at(-1)?.entity_id).toBe('rec_01hv3kanon0000000001');
  });

  describe('expiry', () => {
    it('derives the expiry from the given time and validity_duration', () => {
      expect(consentExpiresAt(frozenHosted())).toBe('2026-03-01T10:00:00.000Z');
      expect(consentExpiresAt(freezeConsentReceipt(importedRecordInput()))).toBe('2024-06-15T12:00:00.000Z');
      const noDuration = freezeConsentReceipt({ ...hostedConsentInput(), flow: { id: 'flw_dev_fedcba9876543210', terms: normaliseFlowTerms({ ...NEWSLETTER_FLOW_BODY, consent_duration: null }) } });
      expect(consentExpiresAt(noDuration)).toBeUndefined();
      expect(read(noDuration, [], '2099-01-01T00:00:00Z').event.some((e) => e.event_state === 'consent expired')).toBe(false);
    });

    it('writes the expiry with its milliseconds, as every other time of the API (it dropped them when they were zero)', () => {
      const decidedWhole = deepFreeze(freezeConsentReceipt({ ...hostedConsentInput(), decision: { ...hostedConsentInput().decision, decidedAt: '2025-03-01T10:00:00.000Z' } }));
      const receipt = read(decidedWhole, [], '2027-01-01T00:00:00.000Z');
      expect(receipt.event.map((e) => [e.event_state, e.event_time]).filter(([state]) => state === 'consent given' || state === 'consent expired')).toEqual([
        ['consent given', '2025-03-01T10:00:00.000Z'],
        ['consent expired', '2026-03-01T10:00:00.000Z'],
      ]);
      const decidedInPart = deepFreeze(freezeConsentReceipt({ ...hostedConsentInput(), decision: { ...hostedConsentInput().decision, decidedAt: '2025-03-01T10:00:00.250Z' } }));
      expect(consentExpiresAt(decidedInPart)).toBe('2026-03-01T10:00:00.250Z');
    });

    it('reads a term ending past the last instant a date can name as one that never lapses (it threw, and every read of the receipt failed)', () => {
      const forGood = freezeConsentReceipt({ ...hostedConsentInput(), flow: { id: 'flw_dev_fedcba9876543210', terms: normaliseFlowTerms({ ...NEWSLETTER_FLOW_BODY, consent_duration: 'P300000Y' }) } });
      expect(consentExpiresAt(forGood)).toBeUndefined();
      const receipt = read(forGood, [], '2099-01-01T00:00:00Z');
      expectSchemaValid(receipt);
      expect(receipt.event.some((e) => e.event_state === 'consent expired')).toBe(false);
    });

    it('appends consent expired by the platform processor once now reaches it, not before, and not without a clock', () => {
      const frozen = frozenHosted();
      expect(read(frozen, [], '2026-03-01T09:59:59Z').event).toHaveLength(3);
      expect(read(frozen, []).event).toHaveLength(3);
      const expired = read(frozen, [], '2026-03-01T10:00:00Z');
      expect(expired.event.at(-1)).toEqual({ event_time: '2026-03-01T10:00:00.000Z', entity_id: 'decision-service', event_type: 'regular', event_state: 'consent expired' });
      expect(receiptStatus(expired)).toBe('expired');
      const withDate = projectReceipt(frozen, [], { schemaUrl: SCHEMA_URL_BASE, now: new Date('2030-01-01T00:00:00Z') });
      expectSchemaValid(withDate);
      expect(withDate.event.at(-1)?.event_state).toBe('consent expired');
    });

    it('counts an imported record from its original capture time', () => {
      const receipt = read(deepFreeze(freezeConsentReceipt(importedRecordInput())), [], '2025-03-03T16:20:00Z');
      expect(receipt.event.at(-1)).toMatchObject({ event_state: 'consent expired', event_time: '2024-06-15T12:00:00.000Z' });
    });

    it('places the expiry among withdrawals in time order', () => {
      const receipt = read(
        frozenHosted(),
        [
          { kind: 'withdrawal', at: '2026-05-01T00:00:00Z', channel: 'own_records' },
          { kind: 'withdrawal', at: '2025-05-01T00:00:00Z', purposeId: 'marketing_email', channel: 'receipt_link' },
        ],
        '2027-01-01T00:00:00Z',
      );
      expect(receipt.event.slice(3).map((e) => [e.event_state, e.event_time])).toEqual([
        ['consent withdrawn', '2025-05-01T00:00:00Z'],
        ['consent expired', '2026-03-01T10:00:00.000Z'],
        ['consent withdrawn', '2026-05-01T00:00:00Z'],
      ]);
      expect(receiptStatus(receipt)).toBe('expired');
    });

    it('is suppressed after the whole consent was withdrawn, or every purpose was (an objection to one counting)', () => {
      const whole = read(frozenHosted(), [{ kind: 'withdrawal', at: '2025-05-01T00:00:00Z' }], '2027-01-01T00:00:00Z');
      expect(whole.event.some((e) => e.event_state === 'consent expired')).toBe(false);
      expect(receiptStatus(whole)).toBe('withdrawn');
      const lastEnds: LifecycleFact[] = [
        { kind: 'withdrawal', at: '2025-06-01T00:00:00Z', purposeId: 'product_analytics' },
        { kind: 'objection', at: '2025-06-01T00:00:00Z', purposeId: 'product_analytics', channel: 'newer_record' },
      ];
      for (const last of lastEnds) {
        const each = read(frozenHosted(), [{ kind: 'withdrawal', at: '2025-05-01T00:00:00Z', purposeId: 'marketing_email' }, last], '2027-01-01T00:00:00Z');
        expect(each.event.some((e) => e.event_state === 'consent expired')).toBe(false);
        expect(receiptStatus(each)).toBe('withdrawn');
      }
    });
  });

  it('refuses facts that do not fit the record, naming each', () => {
    const frozen = frozenHosted();
    const error = refusal(() =>
      projectReceipt(
        frozen,
        [
          { kind: 'withdrawal', at: '2025-04-01T00:00:00+02:00' },
          { kind: 'withdrawal', at: '2025-04-01T00:00:00Z', purposeId: 'terms_of_service' },
          { kind: 'withdrawal', at: '2025-04-01T00:00:00Z', channel: 'phone' as never },
          { kind: 'consent' as never, at: '2025-04-01T00:00:00Z' },
          // An objection is to a legitimate-interest purpose the record lets stand, never to a consent one.
          { kind: 'objection', at: '2025-04-01T00:00:00Z', purposeId: 'marketing_email' },
          { kind: 'objection', at: '2025-04-01T00:00:00Z' } as never,
        ],
        { schemaUrl: SCHEMA_URL_BASE, now: 'not a time' },
      ),
    );
    expect(error.code).toBe('validation_failed');
    expect(error.details!.map((d) => d.field)).toEqual([
      'lifecycle[0].at',
      'lifecycle[1].purposeId',
      'lifecycle[2].channel',
      'lifecycle[3].kind',
      'lifecycle[4].purposeId',
      'lifecycle[5].purposeId',
      'options.now',
    ]);
  });

  it('refuses a withdrawal on a notice record', () => {
    const notice = freezeConsentReceipt({
      ...hostedConsentInput(),
      decision: { ...hostedConsentInput().decision, outcome: 'declined', purposeStatuses: { marketing_email: 'declined', product_analytics: 'objected' } },
    });
    expect(read(notice, [], '2099-01-01T00:00:00Z').event.map((e) => e.event_state)).toEqual(['notice shown', 'notice acknowledged', 'objection recorded']);
    expect(refusal(() => projectReceipt(notice, [{ kind: 'withdrawal', at: '2025-04-01T00:00:00Z' }], { schemaUrl: SCHEMA_URL_BASE })).details![0].field).toBe('lifecycle[0]');
    // Nothing stands on it to object to later either.
    expect(refusal(() => projectReceipt(notice, [{ kind: 'objection', at: '2025-04-01T00:00:00Z', purposeId: 'product_analytics' }], { schemaUrl: SCHEMA_URL_BASE })).details![0].field).toBe(
      'lifecycle[0].purposeId',
    );
  });

  describe('objections made after the decision', () => {
    it('appends objection recorded for a purpose the record let stand, with its purpose and channel, in time order', () => {
      const frozen = frozenHosted();
      const receipt = read(frozen, [
        { kind: 'withdrawal', at: '2025-06-01T00:00:00Z', purposeId: 'marketing_email', channel: 'own_records' },
        { kind: 'objection', at: '2025-04-01T00:00:00Z', purposeId: 'product_analytics', channel: 'newer_record' },
      ]);
      expect(receipt.event.slice(3)).toEqual([
        { event_time: '2025-04-01T00:00:00Z', entity_id: SUBJECT, event_type: 'implicit', event_state: 'objection recorded', purpose_id: 'product_analytics', event_channel: 'newer_record' },
        { event_time: '2025-06-01T00:00:00Z', entity_id: SUBJECT, event_type: 'explicit', event_state: 'consent withdrawn', purpose_id: 'marketing_email', event_channel: 'own_records' },
      ]);
      // The purpose stays listed as it was at decision time; it no longer counts as in force.
      expect(receipt.pii_processing).toEqual(frozen.pii_processing);
      expect(receiptStatus(receipt)).toBe('withdrawn');
      expect(receiptStatus(read(frozen, [{ kind: 'objection', at: '2025-04-01T00:00:00Z', purposeId: 'product_analytics', channel: 'newer_record' }]))).toBe('partially_withdrawn');
    });

    it('does not count an objection frozen with the decision as ending anything granted', () => {
      const frozen = deepFreeze(freezeConsentReceipt(anonymousFieldInput()));
      expect(frozen.event.some((e) => e.event_state === 'objection recorded')).toBe(true);
      expect(receiptStatus(read(frozen, []))).toBe('active');
    });
  });
});

describe('receiptStatus', () => {
  it('is active for a fresh receipt (and a notice record), partially withdrawn after some purposes', () => {
    const frozen = frozenHosted();
    expect(receiptStatus(frozen)).toBe('active');
    expect(receiptStatus(read(frozen, []))).toBe('active');
    expect(receiptStatus(read(frozen, [{ kind: 'withdrawal', at: '2025-05-01T00:00:00Z', purposeId: 'marketing_email' }]))).toBe('partially_withdrawn');
  });

  it('lets the first end win', () => {
    const withdrawnFirst = read(frozenHosted(), [{ kind: 'withdrawal', at: '2026-01-01T00:00:00Z' }], '2027-01-01T00:00:00Z');
    expect(receiptStatus(withdrawnFirst)).toBe('withdrawn');
    const expiredFirst = read(frozenHosted(), [{ kind: 'withdrawal', at: '2026-06-01T00:00:00Z' }], '2027-01-01T00:00:00Z');
    expect(receiptStatus(expiredFirst)).toBe('expired');
  });
});
