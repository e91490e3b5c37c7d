import fc from 'fast-check';
import type { PurposeStatus } from '../decisions/purpose-decisions';
import type { RecordedPurpose } from './attestation';
import { HostedConsentDecision, hostedDecisionHistory, hostedPurposesGranted, hostedRevocationByPurpose, hostedWithdrawalsByNewerRecords, NewerRecordDecision, recordWithdrawalsByHostedDecision } from './hosted-decisions';
import { consentStatusOf, RecordHistoryEntry } from './status';

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

const terms: HostedConsentDecision['terms'] = {
  purposes: [
    { key: 'newsletter', basis: 'consent', takes_decision: true },
    { key: 'analytics', basis: 'consent', takes_decision: true },
    { key: 'fraud', basis: 'legitimate_interest', takes_decision: true },
    { key: 'billing', basis: 'contract', takes_decision: false },
  ],
  consent_duration: null,
};

const hosted = (extra: Partial<HostedConsentDecision> = {}): HostedConsentDecision => ({
  record_id: 'rec_hosted',
  completed_at: at(10),
  status: 'fulfilled',
  purpose_outcomes: { newsletter: 'granted', analytics: 'declined', fraud: 'objected', billing: 'noticed' },
  purpose_decisions: { newsletter: true, analytics: false, fraud: false, billing: false },
  terms,
  ...extra,
});

describe('hostedDecisionHistory', () => {
  it('is a record decided and recorded at completion, each purpose as the person decided it with its basis', () => {
    expect(hostedDecisionHistory(hosted())).toEqual({
      record_id: 'rec_hosted',
      recorded_at: at(10),
      captured_at: at(10),
      purposes: {
        newsletter: { status: 'granted', basis: 'consent' },
        analytics: { status: 'declined', basis: 'consent' },
        fraud: { status: 'objected', basis: 'legitimate_interest' },
        billing: { status: 'noticed', basis: 'contract' },
      },
      ownWithdrawalsOnly: true,
    });
  });

  it('withdraws, at its revocation, each purpose it granted and nothing else', () => {
    const revoked = hostedDecisionHistory(hosted({ status: 'revoked', revoked_at: new Date(at(20)), purpose_outcomes: { newsletter: 'granted', analytics: 'granted', fraud: 'noticed', billing: 'noticed' } }));
    expect(revoked.withdrawn).toEqual([
      { purpose: 'newsletter', at: at(20), ownRecordOnly: true },
      { purpose: 'analytics', at: at(20), ownRecordOnly: true },
    ]);
    expect(consentStatusOf([revoked])).toEqual({
      newsletter: { status: 'withdrawn', record_id: 'rec_hosted', updated_at: at(20) },
      analytics: { status: 'withdrawn', record_id: 'rec_hosted', updated_at: at(20) },
      fraud: { status: 'noticed', record_id: 'rec_hosted', updated_at: at(10) },
      billing: { status: 'noticed', record_id: 'rec_hosted', updated_at: at(10) },
    });
    // A fulfilled session carries no withdrawal, whatever a stray time says.
    expect(hostedDecisionHistory(hosted({ revoked_at: at(20) })).withdrawn).toBeUndefined();
  });

  it('withdraws a purpose the person withdrew on its own at that time, and at the revocation only what was left', () => {
    const both = { newsletter: 'granted', analytics: 'granted', fraud: 'objected', billing: 'noticed' } as const;
    const one = hosted({ purpose_outcomes: both, withdrawals: [{ purpose: 'analytics', at: at(15), channel: 'own_records' }] });
    expect(hostedDecisionHistory(one).withdrawn).toEqual([{ purpose: 'analytics', at: at(15), channel: 'own_records', ownRecordOnly: true }]);
    expect(consentStatusOf([hostedDecisionHistory(one)])).toMatchObject({
      newsletter: { status: 'granted', updated_at: at(10) },
      analytics: { status: 'withdrawn', updated_at: at(15) },
    });
    expect(hostedPurposesGranted(one)).toEqual(['newsletter']);
    // Revoked later: the purpose withdrawn before keeps its time, the rest goes at the revocation.
    const revoked = hostedDecisionHistory({ ...one, status: 'revoked', revoked_at: at(20) });
    expect(revoked.withdrawn).toEqual([
      { purpose: 'analytics', at: at(15), channel: 'own_records', ownRecordOnly: true },
      { purpose: 'newsletter', at: at(20), ownRecordOnly: true },
    ]);
    expect(hostedPurposesGranted({ ...one, status: 'revoked' })).toEqual([]);
  });

  it('reads a withdrawal mark of a purpose the session did not grant, or one repeated, as nothing more', () => {
    const marks = [
      { purpose: 'analytics', at: at(12), channel: 'own_records' },
      { purpose: 'newsletter', at: at(14), channel: 'receipt_link' },
      { purpose: 'newsletter', at: at(16), channel: 'own_records' },
      { purpose: 'sms', at: at(18), channel: 'own_records' },
    ];
    // analytics was declined, sms is no purpose of it: only the newsletter's first mark counts.
    expect(hostedDecisionHistory(hosted({ withdrawals: marks })).withdrawn).toEqual([{ purpose: 'newsletter', at: at(14), channel: 'receipt_link', ownRecordOnly: true }]);
    expect(hostedPurposesGranted(hosted({ withdrawals: marks }))).toEqual([]);
    expect(hostedPurposesGranted(hosted())).toEqual(['newsletter']);
  });

  it('lapses at completion plus the flow version\'s consent duration', () => {
    const entry = hostedDecisionHistory(hosted({ completed_at: '2025-01-01T00:00:00.000Z', terms: { ...terms, consent_duration: 'P1Y' } }));
    expect(entry.expires_at).toBe('2026-01-01T00:00:00.000Z');
    expect(consentStatusOf([entry], Date.parse('2026-01-02T00:00:00.000Z')).newsletter).toEqual({ status: 'expired', record_id: 'rec_hosted', updated_at: '2026-01-01T00:00:00.000Z' });
  });

  it('reads a session that kept only grants: consent granted or declined, notices noticed, a legitimate interest left out', () => {
    const entry = hostedDecisionHistory(hosted({ purpose_outcomes: null, purpose_decisions: { newsletter: true, analytics: false, fraud: false, billing: false } }));
    expect(entry.purposes).toEqual({
      newsletter: { status: 'granted', basis: 'consent' },
      analytics: { status: 'declined', basis: 'consent' },
      billing: { status: 'noticed', basis: 'contract' },
    });
  });

  it('merges with the records by the newest decision: a hosted grant after a record decides, a record after it decides', () => {
    const record: RecordHistoryEntry = { record_id: 'rec_api', recorded_at: at(5), captured_at: at(5), purposes: { newsletter: { status: 'declined', basis: 'consent' }, sms: { status: 'granted', basis: 'consent' } } };
    expect(consentStatusOf([record, hostedDecisionHistory(hosted())])).toMatchObject({
      newsletter: { status: 'granted', record_id: 'rec_hosted', updated_at: at(10) },
      sms: { status: 'granted', record_id: 'rec_api' },
    });
    const later = { ...record, recorded_at: at(15), captured_at: at(15) };
    expect(consentStatusOf([later, hostedDecisionHistory(hosted())]).newsletter).toEqual({ status: 'declined', record_id: 'rec_api', updated_at: at(15) });
  });

  it('keeps a hosted grant decided after a record when the person withdraws that record afterwards: the withdrawal is of the record only', () => {
    // A record of the same flow granted before the hosted consent, withdrawn whole by the person after it.
    const record: RecordHistoryEntry = {
      record_id: 'rec_api',
      flow_id: 'flw_1',
      recorded_at: at(5),
      captured_at: at(5),
      purposes: { newsletter: { status: 'granted', basis: 'consent' } },
      withdrawn: [{ at: at(20), channel: 'own_records' }],
    };
    // The hosted consent's receipt and the records page say granted; so does consent_status (it said withdrawn).
    expect(consentStatusOf([record, hostedDecisionHistory(hosted({ flow_id: 'flw_1' }))]).newsletter).toEqual({ status: 'granted', record_id: 'rec_hosted', flow_id: 'flw_1', updated_at: at(10) });
  });
});

describe('hostedDecisionHistory with the records: properties', () => {
  const outcome = fc.constantFrom<RecordedPurpose>(
    { status: 'granted', basis: 'consent' },
    { status: 'declined', basis: 'consent' },
    { status: 'objected', basis: 'legitimate_interest' },
    { status: 'noticed', basis: 'contract' },
  );
  const keys = ['newsletter', 'analytics', 'fraud', 'billing'] as const;
  const recordsArbitrary = fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { maxLength: 4 }).chain((minutes) =>
    fc.tuple(
      ...minutes.map((minute, index) =>
        fc.record({
          record_id: fc.constant(`r${index}`),
          recorded_at: fc.constant(at(minute)),
          purposes: fc.dictionary(fc.constantFrom(...keys, 'sms'), outcome),
          withdrawn: fc.array(fc.record({ at: fc.integer({ min: 0, max: 1000 }).map(at) }), { maxLength: 1 }),
        }),
      ),
    ),
  );
  const outcomesArbitrary = fc.record({
    newsletter: fc.constantFrom<PurposeStatus>('granted', 'declined'),
    analytics: fc.constantFrom<PurposeStatus>('granted', 'declined'),
    fraud: fc.constantFrom<PurposeStatus>('noticed', 'objected'),
    billing: fc.constant<PurposeStatus>('noticed'),
  });

  it('a hosted decision made after every record decides each of its purposes as the person decided it', () => {
    fc.assert(
      fc.property(recordsArbitrary, outcomesArbitrary, (records, outcomes) => {
        const statuses = consentStatusOf([...records, hostedDecisionHistory(hosted({ completed_at: at(2000), purpose_outcomes: outcomes }))]);
        for (const key of keys) expect(statuses[key]).toEqual({ status: outcomes[key], record_id: 'rec_hosted', updated_at: at(2000) });
      }),
    );
  });

  it('no withdrawal made on a record counts against a hosted decision, whenever it was made: the hosted consent carries none', () => {
    // The records of the same flow withdrawn by the person at any time, also after the hosted decision.
    const withdrawnRecords = recordsArbitrary.chain((records) =>
      fc.tuple(...records.map((record) => fc.array(fc.record({ at: fc.integer({ min: 0, max: 3000 }).map(at) }), { minLength: 1, maxLength: 2 }).map((withdrawn) => ({ ...record, withdrawn })))),
    );
    fc.assert(
      fc.property(withdrawnRecords, outcomesArbitrary, fc.integer({ min: 0, max: 2000 }), (records, outcomes, completed) => {
        const decision = hostedDecisionHistory(hosted({ completed_at: at(completed), purpose_outcomes: outcomes }));
        const statuses = consentStatusOf([...records, decision]);
        for (const key of keys) {
          if (statuses[key].record_id === 'rec_hosted') expect(statuses[key]).toEqual({ status: outcomes[key], record_id: 'rec_hosted', updated_at: at(completed) });
        }
      }),
    );
  });

  it('its revocation withdraws exactly what it granted where it decides, and never a grant of a record decided after it', () => {
    fc.assert(
      fc.property(recordsArbitrary, outcomesArbitrary, fc.integer({ min: 0, max: 1000 }), (records, outcomes, completed) => {
        const decision = hosted({ completed_at: at(completed), purpose_outcomes: outcomes });
        const before = consentStatusOf([...records, hostedDecisionHistory(decision)]);
        const after = consentStatusOf([...records, hostedDecisionHistory({ ...decision, status: 'revoked', revoked_at: at(3000) })]);
        for (const key of keys) {
          const withdrawnHere = outcomes[key] === 'granted' && before[key].status === 'granted' && before[key].record_id === decision.record_id;
          expect(after[key]).toEqual(withdrawnHere ? { ...before[key], status: 'withdrawn', updated_at: at(3000) } : before[key]);
        }
        // A purpose the session does not hold is untouched.
        expect(after.sms).toEqual(before.sms);
      }),
    );
  });
});

describe('hostedRevocationByPurpose', () => {
  it('is by purpose while a noticed legitimate-interest purpose stands, as for a record', () => {
    expect(hostedRevocationByPurpose(hosted({ purpose_outcomes: { newsletter: 'granted', analytics: 'granted', fraud: 'noticed', billing: 'noticed' } }))).toBe(true);
  });

  it('is of the whole record when the legitimate interest was objected to (a notice-only purpose is not in force)', () => {
    expect(hostedRevocationByPurpose(hosted({ purpose_outcomes: { newsletter: 'granted', analytics: 'granted', fraud: 'objected', billing: 'noticed' } }))).toBe(false);
  });

  it('is by purpose after the person withdrew a purpose on its own: it takes back the rest', () => {
    const both = { newsletter: 'granted', analytics: 'granted', fraud: 'objected', billing: 'noticed' } as const;
    expect(hostedRevocationByPurpose(hosted({ purpose_outcomes: both, withdrawals: [{ purpose: 'analytics', at: at(15), channel: 'own_records' }] }))).toBe(true);
    // A mark of a purpose it never granted changes nothing.
    expect(hostedRevocationByPurpose(hosted({ purpose_outcomes: { ...both, analytics: 'declined' }, withdrawals: [{ purpose: 'analytics', at: at(15), channel: 'own_records' }] }))).toBe(false);
  });

  it('is of the whole record for a session that kept only grants (a noticed legitimate interest cannot be told from an objected one)', () => {
    expect(hostedRevocationByPurpose(hosted({ purpose_outcomes: null, purpose_decisions: { newsletter: true, analytics: true, fraud: true, billing: false } }))).toBe(false);
  });
});

describe('hostedWithdrawalsByNewerRecords', () => {
  const both = { newsletter: 'granted', analytics: 'granted', fraud: 'noticed', billing: 'noticed' } as const;
  const newer = (record_id: string, minute: number, purposes: Record<string, string>): NewerRecordDecision => ({
    record_id,
    captured_at: at(minute),
    purposes: Object.fromEntries(Object.entries(purposes).map(([key, status]) => [key, { status }])),
  });

  it('takes back, at a newer record\'s decision, what the consent still grants that the record holds and does not grant', () => {
    const given = hosted({ purpose_outcomes: both });
    expect(hostedWithdrawalsByNewerRecords(given, [newer('rec_later', 20, { newsletter: 'granted', analytics: 'declined', fraud: 'objected' })])).toEqual([
      { record_id: 'rec_later', at: at(20), withdrawn: ['analytics'], objected: ['fraud'], remaining: ['newsletter'] },
    ]);
    // Records in the order they were decided, each purpose once: the second takes back the rest.
    expect(
      hostedWithdrawalsByNewerRecords(given, [newer('rec_third', 40, { newsletter: 'declined', analytics: 'declined' }), newer('rec_second', 30, { newsletter: 'granted', analytics: 'declined' })]),
    ).toEqual([
      { record_id: 'rec_second', at: at(30), withdrawn: ['analytics'], objected: [], remaining: ['newsletter'] },
      { record_id: 'rec_third', at: at(40), withdrawn: ['newsletter'], objected: [], remaining: [] },
    ]);
  });

  it('takes back nothing a record decided before it, after its term ran out, or not holding the purpose; nothing from a revoked consent', () => {
    const given = hosted({ purpose_outcomes: both });
    const declinesBoth = (minute: number) => newer('rec_x', minute, { newsletter: 'declined', analytics: 'declined' });
    expect(hostedWithdrawalsByNewerRecords(given, [declinesBoth(9)])).toEqual([]);
    // Decided at the same time: the record arrived later, so it is the newer decision.
    expect(hostedWithdrawalsByNewerRecords(given, [declinesBoth(10)])).toHaveLength(1);
    const lasting = hosted({ purpose_outcomes: both, terms: { ...terms, consent_duration: 'PT30M' } });
    expect(hostedWithdrawalsByNewerRecords(lasting, [declinesBoth(39)])).toHaveLength(1);
    expect(hostedWithdrawalsByNewerRecords(lasting, [declinesBoth(40)])).toEqual([]);
    expect(hostedWithdrawalsByNewerRecords(given, [newer('rec_x', 20, { sms: 'declined' })])).toEqual([]);
    expect(hostedWithdrawalsByNewerRecords(hosted({ purpose_outcomes: both, status: 'revoked', revoked_at: at(15) }), [declinesBoth(20)])).toEqual([]);
    // What the person or an earlier record withdrew already is not withdrawn again.
    const partly = hosted({ purpose_outcomes: both, withdrawals: [{ purpose: 'analytics', at: at(12), channel: 'newer_record' }] });
    expect(hostedWithdrawalsByNewerRecords(partly, [declinesBoth(20)])).toEqual([{ record_id: 'rec_x', at: at(20), withdrawn: ['newsletter'], objected: [], remaining: [] }]);
  });

  it('objects, once, to a legitimate interest the consent let stand that a newer record objects to, also after its term or with nothing withdrawn', () => {
    const lasting = hosted({ purpose_outcomes: both, terms: { ...terms, consent_duration: 'PT30M' } });
    expect(
      hostedWithdrawalsByNewerRecords(lasting, [newer('rec_a', 50, { newsletter: 'granted', analytics: 'granted', fraud: 'objected' }), newer('rec_b', 60, { fraud: 'objected' })]),
    ).toEqual([{ record_id: 'rec_a', at: at(50), withdrawn: [], objected: ['fraud'], remaining: ['newsletter', 'analytics'] }]);
    // Objected to before (a mark of it): not again.
    const marked = hosted({ purpose_outcomes: both, withdrawals: [{ purpose: 'fraud', at: at(12), channel: 'newer_record' }] });
    expect(hostedWithdrawalsByNewerRecords(marked, [newer('rec_a', 20, { fraud: 'objected' })])).toEqual([]);
    // The mark reads as nothing withdrawn: the consent purposes stand.
    expect(hostedPurposesGranted(marked)).toEqual(['newsletter', 'analytics']);
    // A legitimate interest the person objected to on the hosted pages is not objected to again.
    expect(hostedWithdrawalsByNewerRecords(hosted(), [newer('rec_a', 20, { fraud: 'objected' })])).toEqual([]);
  });

  it('withdraws only purposes the consent granted and the records decided otherwise, each once, never before its completion', () => {
    const statuses = fc.constantFrom('granted', 'declined', 'objected', 'noticed');
    const records = fc.array(
      fc.record({
        minute: fc.integer({ min: 0, max: 60 }),
        purposes: fc.dictionary(fc.constantFrom('newsletter', 'analytics', 'fraud', 'sms'), statuses),
      }),
      { maxLength: 5 },
    );
    const outcomes = fc.record({ newsletter: fc.constantFrom<PurposeStatus>('granted', 'declined'), analytics: fc.constantFrom<PurposeStatus>('granted', 'declined'), fraud: fc.constant<PurposeStatus>('noticed'), billing: fc.constant<PurposeStatus>('noticed') });
    fc.assert(
      fc.property(outcomes, records, (purpose_outcomes, drawn) => {
        const decision = hosted({ purpose_outcomes });
        const given = drawn.map((record, i) => newer(`r${i}`, record.minute, record.purposes));
        const result = hostedWithdrawalsByNewerRecords(decision, given);
        const withdrawn = result.flatMap((withdrawal) => withdrawal.withdrawn);
        expect(new Set(withdrawn).size).toBe(withdrawn.length);
        for (const withdrawal of result) {
          const record = given.find((one) => one.record_id === withdrawal.record_id)!;
          expect(Date.parse(withdrawal.at)).toBeGreaterThanOrEqual(Date.parse(at(10)));
          for (const key of withdrawal.withdrawn) {
            expect(purpose_outcomes[key as keyof typeof purpose_outcomes]).toBe('granted');
            expect(record.purposes[key].status).not.toBe('granted');
          }
        }
        // What stays granted is what the consent granted less what went.
        const granted = Object.entries(purpose_outcomes).filter(([, status]) => status === 'granted').map(([key]) => key);
        const last = result[result.length - 1];
        if (last) expect(last.remaining).toEqual(granted.filter((key) => !withdrawn.includes(key)));
        // The same answer however the records are listed.
        expect(hostedWithdrawalsByNewerRecords(decision, [...given].reverse()).flatMap((one) => one.withdrawn).sort()).toEqual([...withdrawn].sort());
      }),
    );
  });
});

describe('recordWithdrawalsByHostedDecision', () => {
  const granted = { status: 'granted', basis: 'consent' } as const;
  const declined = { status: 'declined', basis: 'consent' } as const;
  const newest = (extra: Partial<{ withdrawals: Array<{ purpose?: string; at: string; channel?: string }>; lapsesAt: number; purposes: Record<string, RecordedPurpose> }> = {}) => ({
    recordId: 'rec_api',
    purposes: { newsletter: granted, analytics: granted, fraud: { status: 'noticed', basis: 'legitimate_interest' } } as Record<string, RecordedPurpose>,
    withdrawals: [] as Array<{ purpose?: string; at: string; channel?: string }>,
    capturedAt: Date.parse(at(5)),
    ...extra,
  });

  it('takes back what the record still grants and the hosted decision declines, as a newer record would, marking the record', () => {
    const record = newest();
    const withdrawals = recordWithdrawalsByHostedDecision(record, { record_id: 'rec_hosted', purposes: { newsletter: granted, analytics: declined } }, at(10));
    expect(withdrawals).toEqual([
      expect.objectContaining({ recordId: 'rec_api', withdrawn: ['analytics'], objected: [], event: 'consent.purpose_revoked', whole: false, at: at(10), channel: 'newer_record', supersededBy: 'rec_hosted' }),
    ]);
    expect(record.withdrawals).toEqual([{ purpose: 'analytics', at: at(10), channel: 'newer_record' }]);
  });

  it('objects to a legitimate interest the record let stand, and withdraws by purpose while it stands', () => {
    const record = newest();
    const [withdrawal] = recordWithdrawalsByHostedDecision(record, { record_id: 'rec_hosted', purposes: { newsletter: declined, analytics: declined, fraud: { status: 'objected', basis: 'legitimate_interest' } } }, at(10));
    expect(withdrawal).toMatchObject({ withdrawn: ['newsletter', 'analytics'], objected: ['fraud'], event: 'consent.revoked', whole: false });
    const noInterest = newest({ purposes: { newsletter: granted } });
    const [whole] = recordWithdrawalsByHostedDecision(noInterest, { record_id: 'rec_hosted', purposes: { newsletter: declined } }, at(10));
    expect(whole).toMatchObject({ withdrawn: ['newsletter'], event: 'consent.revoked', whole: true });
    expect(noInterest.withdrawals).toEqual([{ at: at(10), channel: 'newer_record' }]);
  });

  it('takes nothing from a record decided after it, nor what was withdrawn or had expired by then', () => {
    const later = newest({ capturedAt: Date.parse(at(20)) } as never);
    expect(recordWithdrawalsByHostedDecision(later, { record_id: 'rec_hosted', purposes: { newsletter: declined, analytics: declined } }, at(10))).toEqual([]);
    expect(later.withdrawals).toEqual([]);
    const withdrawn = newest({ withdrawals: [{ purpose: 'analytics', at: at(7), channel: 'own_records' }] });
    expect(recordWithdrawalsByHostedDecision(withdrawn, { record_id: 'rec_hosted', purposes: { newsletter: granted, analytics: declined } }, at(10))).toEqual([]);
    const lapsed = newest({ lapsesAt: Date.parse(at(8)) });
    expect(recordWithdrawalsByHostedDecision(lapsed, { record_id: 'rec_hosted', purposes: { newsletter: declined, analytics: declined } }, at(10))).toEqual([]);
  });
});
