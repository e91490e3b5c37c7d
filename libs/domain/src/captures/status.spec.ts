import fc from 'fast-check';
import type { RecordedPurpose } from './attestation';
import { consentLapsesAt, consentStatusOf, RecordHistoryEntry } from './status';

const granted: RecordedPurpose = { status: 'granted', basis: 'consent' };
const declined: RecordedPurpose = { status: 'declined', basis: 'consent' };
const objected: RecordedPurpose = { status: 'objected', basis: 'legitimate_interest' };
const noticed: RecordedPurpose = { status: 'noticed', basis: 'contract' };

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

describe('consentStatusOf', () => {
  it('is empty without records', () => {
    expect(consentStatusOf([])).toEqual({});
  });

  it('lets the newest record decide each purpose, whatever the input order', () => {
    const older: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(1), purposes: { marketing: granted, sms: granted, tos: noticed } };
    const newer: RecordHistoryEntry = { record_id: 'r2', recorded_at: at(2), purposes: { marketing: declined, fraud: objected } };
    expect(consentStatusOf([newer, older])).toEqual({
      marketing: { status: 'declined', record_id: 'r2', updated_at: at(2) },
      fraud: { status: 'objected', record_id: 'r2', updated_at: at(2) },
      sms: { status: 'granted', record_id: 'r1', updated_at: at(1) },
      tos: { status: 'noticed', record_id: 'r1', updated_at: at(1) },
    });
    expect(consentStatusOf([older, newer])).toEqual(consentStatusOf([newer, older]));
  });

  it('turns a granted purpose withdrawn after its record, wholly or by purpose', () => {
    const whole = consentStatusOf([
      { record_id: 'r1', recorded_at: at(1), purposes: { marketing: granted, sms: declined, tos: noticed }, withdrawn: [{ at: at(5) }] },
    ]);
    expect(whole).toEqual({
      marketing: { status: 'withdrawn', record_id: 'r1', updated_at: at(5) },
      sms: { status: 'declined', record_id: 'r1', updated_at: at(1) },
      tos: { status: 'noticed', record_id: 'r1', updated_at: at(1) },
    });
    const scoped = consentStatusOf([
      { record_id: 'r1', recorded_at: at(1), purposes: { marketing: granted, sms: granted }, withdrawn: [{ purpose: 'sms', at: at(7) }, { purpose: 'sms', at: at(6) }] },
    ]);
    expect(scoped.marketing.status).toBe('granted');
    expect(scoped.sms).toEqual({ status: 'withdrawn', record_id: 'r1', updated_at: at(6) });
  });

  it('lets a later record re-affirm over an older withdrawal, but not over a later one', () => {
    const withdrawnOld: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(1), purposes: { marketing: granted }, withdrawn: [{ at: at(2) }] };
    const regrant: RecordHistoryEntry = { record_id: 'r2', recorded_at: at(3), purposes: { marketing: granted } };
    expect(consentStatusOf([withdrawnOld, regrant]).marketing).toEqual({ status: 'granted', record_id: 'r2', updated_at: at(3) });
    const withdrawnLater: RecordHistoryEntry = { ...withdrawnOld, withdrawn: [{ at: at(4) }] };
    expect(consentStatusOf([withdrawnLater, regrant]).marketing).toEqual({ status: 'withdrawn', record_id: 'r2', updated_at: at(4) });
  });

  it('applies a withdrawal on another record only to the purposes that record holds', () => {
    const statuses = consentStatusOf([
      { record_id: 'r1', recorded_at: at(1), purposes: { marketing: granted }, withdrawn: [{ at: at(9) }] },
      { record_id: 'r2', recorded_at: at(2), purposes: { marketing: granted, sms: granted } },
    ]);
    expect(statuses.marketing.status).toBe('withdrawn');
    expect(statuses.sms.status).toBe('granted');
  });

  it('lets the decision made last decide: a record captured earlier but recorded later (an import of history) does not overrule it', () => {
    const current: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(10), captured_at: at(9), purposes: { marketing: granted } };
    const history: RecordHistoryEntry = { record_id: 'r2', recorded_at: at(20), captured_at: at(1), purposes: { marketing: declined, sms: granted } };
    expect(consentStatusOf([current, history])).toEqual({
      marketing: { status: 'granted', record_id: 'r1', updated_at: at(10) },
      sms: { status: 'granted', record_id: 'r2', updated_at: at(20) },
    });
    // Without capture times the service's order stands (the later recording decides).
    const { captured_at: _c1, ...currentRecorded } = current;
    const { captured_at: _c2, ...historyRecorded } = history;
    expect(consentStatusOf([currentRecorded, historyRecorded]).marketing).toEqual({ status: 'declined', record_id: 'r2', updated_at: at(20) });
    // Equal capture times: the later recording decides.
    expect(consentStatusOf([{ ...history, captured_at: at(9) }, current]).marketing.record_id).toBe('r2');
  });

  it('applies a withdrawal made after a decision even when the decision was recorded after the withdrawal', () => {
    const first: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(1), captured_at: at(1), purposes: { marketing: granted }, withdrawn: [{ at: at(5) }] };
    // Captured at minute 3 (before the withdrawal at 5), delivered at minute 8.
    const late: RecordHistoryEntry = { record_id: 'r2', recorded_at: at(8), captured_at: at(3), purposes: { marketing: granted } };
    expect(consentStatusOf([first, late]).marketing).toEqual({ status: 'withdrawn', record_id: 'r2', updated_at: at(5) });
    // Captured after the withdrawal: it re-affirms.
    expect(consentStatusOf([first, { ...late, captured_at: at(6) }]).marketing).toEqual({ status: 'granted', record_id: 'r2', updated_at: at(8) });
  });

  it('lets a decision made after a supersession re-affirm, whenever the supersession was recorded', () => {
    // Granted at minute 1, declined at 2 (which withdrew the grant, stamped when the service recorded
    // it: minute 30), granted again at 3; all three sent later, as an import of history does.
    const first: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(30), captured_at: at(1), purposes: { marketing: granted, sms: granted }, withdrawn: [{ purpose: 'marketing', at: at(30), channel: 'newer_record' }] };
    const declinedLater: RecordHistoryEntry = { record_id: 'r2', recorded_at: at(30), captured_at: at(2), purposes: { marketing: declined, sms: granted } };
    const grantedAgain: RecordHistoryEntry = { record_id: 'r3', recorded_at: at(31), captured_at: at(3), purposes: { marketing: granted, sms: granted } };
    expect(consentStatusOf([first, declinedLater, grantedAgain]).marketing).toEqual({ status: 'granted', record_id: 'r3', updated_at: at(31) });
    // The same withdrawal made by the person through the older record's page does count.
    const { channel: _channel, ...byThePerson } = first.withdrawn![0];
    expect(consentStatusOf([{ ...first, withdrawn: [byThePerson] }, declinedLater, grantedAgain]).marketing).toEqual({ status: 'withdrawn', record_id: 'r3', updated_at: at(30) });
    // On its own record it still counts (when that record decides the purpose).
    expect(consentStatusOf([first]).marketing).toEqual({ status: 'withdrawn', record_id: 'r1', updated_at: at(30) });
  });

  it('lets a granted purpose lapse when its record expires, unless it was withdrawn by then', () => {
    const record: RecordHistoryEntry = { record_id: 'r1', recorded_at: at(1), expires_at: at(10), purposes: { marketing: granted, sms: declined } };
    expect(consentStatusOf([record], Date.parse(at(9)))).toEqual({
      marketing: { status: 'granted', record_id: 'r1', updated_at: at(1) },
      sms: { status: 'declined', record_id: 'r1', updated_at: at(1) },
    });
    expect(consentStatusOf([record], Date.parse(at(10))).marketing).toEqual({ status: 'expired', record_id: 'r1', updated_at: at(10) });
    // Withdrawn before it lapsed: withdrawn; withdrawn after: it had lapsed already.
    expect(consentStatusOf([{ ...record, withdrawn: [{ at: at(5) }] }], Date.parse(at(20))).marketing).toEqual({ status: 'withdrawn', record_id: 'r1', updated_at: at(5) });
    expect(consentStatusOf([{ ...record, withdrawn: [{ at: at(15) }] }], Date.parse(at(20))).marketing).toEqual({ status: 'expired', record_id: 'r1', updated_at: at(10) });
    // A newer record renews it.
    expect(consentStatusOf([record, { record_id: 'r2', recorded_at: at(12), expires_at: at(30), purposes: { marketing: granted } }], Date.parse(at(20))).marketing.status).toBe('granted');
  });

  it('works out when a consent lapses from its capture and the flow version\'s duration', () => {
    expect(consentLapsesAt('2024-01-31T10:00:00.000Z', 'P1M')).toBe('2024-02-29T10:00:00.000Z');
    expect(consentLapsesAt(new Date('2025-01-01T00:00:00Z'), 'P1Y')).toBe('2026-01-01T00:00:00.000Z');
    expect(consentLapsesAt('2025-01-01T00:00:00Z', null)).toBeUndefined();
    expect(consentLapsesAt('2025-01-01T00:00:00Z', 'soon')).toBeUndefined();
  });

  it('keeps the later input of two records with the same time', () => {
    const a: RecordHistoryEntry = { record_id: 'a', recorded_at: at(1), purposes: { marketing: granted } };
    const b: RecordHistoryEntry = { record_id: 'b', recorded_at: at(1), purposes: { marketing: declined } };
    expect(consentStatusOf([a, b]).marketing.record_id).toBe('b');
    expect(consentStatusOf([b, a]).marketing.record_id).toBe('a');
  });

  it('counts a withdrawal on one flow\'s record against no record of another flow with the same purpose key', () => {
    // News (RA) and Shop (RB) both ask for `newsletter`; the person withdraws it on RA after RB was made.
    const news: RecordHistoryEntry = { record_id: 'ra', flow_id: 'news', recorded_at: at(0), purposes: { newsletter: granted }, withdrawn: [{ purpose: 'newsletter', at: at(10), channel: 'own_records' }] };
    const shop: RecordHistoryEntry = { record_id: 'rb', flow_id: 'shop', recorded_at: at(5), purposes: { newsletter: granted } };
    // The answer names the flow that decides the purpose.
    expect(consentStatusOf([news, shop]).newsletter).toEqual({ status: 'granted', record_id: 'rb', flow_id: 'shop', updated_at: at(5) });
    // Within one flow the same withdrawal still counts against a record decided before it (which carries it: carriedWithdrawals).
    expect(consentStatusOf([news, { ...shop, flow_id: 'news' }]).newsletter).toEqual({ status: 'withdrawn', record_id: 'rb', flow_id: 'news', updated_at: at(10) });
    // And on its own record, whichever flow decides the other purposes.
    expect(consentStatusOf([{ ...news, purposes: { newsletter: granted, sms: granted } }, { ...shop, purposes: { sms: granted } }]).newsletter).toEqual({
      status: 'withdrawn',
      record_id: 'ra',
      flow_id: 'news',
      updated_at: at(10),
    });
  });

  it('refuses a timestamp it cannot read', () => {
    expect(() => consentStatusOf([{ record_id: 'r', recorded_at: 'yesterday', purposes: {} }])).toThrow(RangeError);
  });
});

describe('consentStatusOf properties', () => {
  const recordsArbitrary = fc
    .uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 5 })
    .chain((minutes) =>
      fc.tuple(
        ...minutes.map((minute, index) =>
          fc.record({
            record_id: fc.constant(`r${index}`),
            recorded_at: fc.constant(at(minute)),
            purposes: fc.dictionary(
              fc.constantFrom('a', 'b', 'c'),
              fc.constantFrom<RecordedPurpose>(granted, declined, objected, noticed),
            ),
          }),
        ),
      ),
    );

  it('without withdrawals, each purpose is as the newest record holding it says', () => {
    fc.assert(
      fc.property(recordsArbitrary, (records) => {
        const statuses = consentStatusOf(records);
        const newestFirst = [...records].sort((x, y) => Date.parse(y.recorded_at) - Date.parse(x.recorded_at));
        const keys = new Set(records.flatMap((record) => Object.keys(record.purposes)));
        expect(new Set(Object.keys(statuses))).toEqual(keys);
        for (const key of keys) {
          const decider = newestFirst.find((record) => key in record.purposes)!;
          expect(statuses[key]).toEqual({ status: decider.purposes[key].status, record_id: decider.record_id, updated_at: decider.recorded_at });
        }
      }),
    );
  });

  it('a whole withdrawal after every record leaves nothing granted and changes nothing else', () => {
    fc.assert(
      fc.property(recordsArbitrary, (records) => {
        const before = consentStatusOf(records);
        const after = consentStatusOf(records.map((record) => ({ ...record, withdrawn: [{ at: at(2000) }] })));
        for (const [key, entry] of Object.entries(before)) {
          expect(after[key]).toEqual(entry.status === 'granted' ? { ...entry, status: 'withdrawn', updated_at: at(2000) } : entry);
        }
      }),
    );
  });

  it('a withdrawal on a record of another flow changes nothing of the purposes this flow\'s records decide', () => {
    fc.assert(
      fc.property(recordsArbitrary, fc.integer({ min: 0, max: 2000 }), fc.constantFrom<string | undefined>('a', 'b', 'c', undefined), (records, minute, purpose) => {
        const ours = records.map((record) => ({ ...record, flow_id: 'ours' }));
        const other: RecordHistoryEntry = { record_id: 'other', flow_id: 'theirs', recorded_at: at(minute), purposes: { a: granted, b: granted, c: granted } };
        const without = consentStatusOf([...ours, other]);
        const withMark = consentStatusOf([...ours, { ...other, withdrawn: [{ ...(purpose ? { purpose } : {}), at: at(minute + 1), channel: 'own_records' }] }]);
        for (const [key, entry] of Object.entries(without)) {
          if (entry.record_id !== 'other') expect(withMark[key]).toEqual(entry);
        }
      }),
    );
  });
});
