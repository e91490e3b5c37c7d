import fc from 'fast-check';
import type { RecordedPurpose } from './attestation';
import { carriedWithdrawals, ChainLink, placeInChain, purposesInForce, recordInChain } from './chain';
import { consentStatusOf, RecordHistoryEntry, WithdrawalMark } from './status';
import { outcomesAfterWithdrawal, withdrawsAllInForce } from './supersession';

const granted: RecordedPurpose = { status: 'granted', basis: 'consent' };
const declined: RecordedPurpose = { status: 'declined', basis: 'consent' };
const noticed: RecordedPurpose = { status: 'noticed', basis: 'legitimate_interest' };

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString();
const link = (recordId: string, minute: number, purposes: Record<string, RecordedPurpose>, withdrawals: WithdrawalMark[] = []): ChainLink => ({
  recordId,
  purposes,
  withdrawals,
  capturedAt: Date.parse(at(minute)),
});

describe('placeInChain', () => {
  it('puts a record after every record captured at or before it', () => {
    const chain = [link('r1', 0, {}), link('r2', 10, {}), link('r3', 10, {}), link('r4', 20, {})];
    expect(placeInChain(chain, Date.parse(at(10)))).toMatchObject({ index: 3, predecessor: { recordId: 'r3' }, successor: { recordId: 'r4' } });
    expect(placeInChain(chain, Date.parse(at(30)))).toMatchObject({ index: 4, predecessor: { recordId: 'r4' }, successor: null });
    expect(placeInChain(chain, Date.parse(at(-5)))).toMatchObject({ index: 0, predecessor: null, successor: { recordId: 'r1' } });
  });
});

describe('purposesInForce', () => {
  it('reads a granted purpose withdrawn since, wholly or by purpose, as declined', () => {
    const purposes = { a: granted, b: granted, c: declined };
    expect(purposesInForce(purposes, [])).toBe(purposes);
    expect(purposesInForce(purposes, [{ purpose: 'a', at: at(1) }])).toEqual({ a: { ...declined, withdrawn: true }, b: granted, c: declined });
    expect(purposesInForce(purposes, [{ at: at(1) }])).toEqual({ a: { ...declined, withdrawn: true }, b: { ...declined, withdrawn: true }, c: declined });
  });
});

describe('carriedWithdrawals', () => {
  it('carries the person\'s withdrawals made at or after the decision, not a newer record\'s, each purpose by its earliest', () => {
    const predecessor = {
      purposes: { a: granted, b: granted, c: granted },
      withdrawals: [
        { purpose: 'a', at: at(30), channel: 'own_records' },
        { purpose: 'b', at: at(5), channel: 'own_records' },
        { purpose: 'c', at: at(40), channel: 'newer_record' },
        { at: at(20), channel: 'own_records' },
      ],
    };
    const carried = carriedWithdrawals(predecessor, { a: granted, b: granted, c: granted, d: granted }, Date.parse(at(10)));
    expect(carried.withdrawals).toEqual([
      { at: at(20), channel: 'own_records', purposes: ['a', 'b', 'c'], stillGranted: ['d'] },
    ]);
    expect(carried.marks).toEqual([
      { purpose: 'a', at: at(20), channel: 'own_records' },
      { purpose: 'b', at: at(20), channel: 'own_records' },
      { purpose: 'c', at: at(20), channel: 'own_records' },
      { purpose: 'a', at: at(30), channel: 'own_records' },
    ]);
  });

  it('carries a withdrawal of a whole record as the purposes that record granted, not the ones it declined', () => {
    const predecessor = { purposes: { a: granted, b: declined }, withdrawals: [{ at: at(30), channel: 'own_records' }] };
    const carried = carriedWithdrawals(predecessor, { a: granted, b: granted }, Date.parse(at(10)));
    // The person's answer named `a` only; `b` stays granted on the record that grants it.
    expect(carried).toEqual({
      marks: [{ purpose: 'a', at: at(30), channel: 'own_records' }],
      withdrawals: [{ at: at(30), channel: 'own_records', purposes: ['a'], stillGranted: ['b'] }],
    });
  });

  it('carries one withdrawal of several purposes (kept purpose by purpose while a noticed purpose stands) as one, not one per purpose', () => {
    // The person withdrew everything at 00:30 from a record with a noticed legitimate interest: the
    // records page kept one mark per purpose, all at the same time and channel. That is one withdrawal.
    const predecessor = {
      purposes: { a: granted, b: granted, li: noticed },
      withdrawals: [
        { purpose: 'a', at: at(30), channel: 'email_link' },
        { purpose: 'b', at: at(30), channel: 'email_link' },
      ],
    };
    const carried = carriedWithdrawals(predecessor, { a: granted, b: granted, li: noticed }, Date.parse(at(10)));
    expect(carried.withdrawals).toEqual([{ at: at(30), channel: 'email_link', purposes: ['a', 'b'], stillGranted: [] }]);
    expect(carried.marks).toEqual(predecessor.withdrawals);
    // Two withdrawals the person made one after the other stay two.
    const twice = carriedWithdrawals(
      { purposes: { a: granted, b: granted }, withdrawals: [{ purpose: 'a', at: at(30), channel: 'own_records' }, { purpose: 'b', at: at(31), channel: 'own_records' }] },
      { a: granted, b: granted },
      Date.parse(at(10)),
    );
    expect(twice.withdrawals.map((withdrawal) => withdrawal.purposes)).toEqual([['a'], ['b']]);
    // So a record that carries it sends one consent.revoked (scope: purpose), as the withdrawal itself did.
    const chain: ChainLink[] = [];
    recordInChain(chain, link('r1', 0, { a: granted, b: granted, li: noticed }, [...predecessor.withdrawals]), at(100));
    const { withdrawals } = recordInChain(chain, link('r2', 10, { a: granted, b: granted, li: noticed }), at(200));
    expect(withdrawals.map((withdrawal) => [withdrawal.recordId, withdrawal.event, withdrawal.withdrawn, withdrawal.carriedFrom])).toEqual([['r2', 'consent.revoked', ['a', 'b'], 'r1']]);
  });

  it('keeps a withdrawal of a purpose the record does not grant, withdrawing nothing with it', () => {
    const carried = carriedWithdrawals({ purposes: { a: granted }, withdrawals: [{ purpose: 'a', at: at(30), channel: 'own_records' }] }, { a: declined }, Date.parse(at(10)));
    expect(carried).toEqual({ marks: [{ purpose: 'a', at: at(30), channel: 'own_records' }], withdrawals: [] });
  });
});

describe('recordInChain', () => {
  it('compares a late record with the one captured before it too: it withdraws from it what it no longer grants', () => {
    // R1 10:00 grants both; R2 12:00 declines newsletter; R3 11:00, sent last, declines ads.
    const chain: ChainLink[] = [];
    recordInChain(chain, link('r1', 0, { newsletter: granted, ads: granted }), at(200));
    recordInChain(chain, link('r2', 120, { newsletter: declined, ads: granted }), at(201));
    const r3 = link('r3', 60, { newsletter: granted, ads: declined });
    const placed = recordInChain(chain, r3, at(202));
    expect(placed).toMatchObject({ predecessor: { recordId: 'r1' }, successor: { recordId: 'r2' } });
    expect(placed.withdrawals.map(({ recordId, withdrawn, event, supersededBy, channel }) => ({ recordId, withdrawn, event, supersededBy, channel }))).toEqual([
      { recordId: 'r1', withdrawn: ['ads'], event: 'consent.purpose_revoked', supersededBy: 'r3', channel: 'newer_record' },
      { recordId: 'r3', withdrawn: ['newsletter'], event: 'consent.purpose_revoked', supersededBy: 'r2', channel: 'newer_record' },
    ]);
    expect(chain.map((record) => record.recordId)).toEqual(['r1', 'r3', 'r2']);
    expect(chain[0].withdrawals).toEqual([
      { at: at(201), channel: 'newer_record', purpose: 'newsletter' },
      { at: at(202), channel: 'newer_record', purpose: 'ads' },
    ]);
  });

  it('withdraws nothing from a record whose consent term ran out before the newer decision: an expired consent is no longer granted', () => {
    // R1 10:00 grants both, its term ends at 11:00; R2 12:00 declines newsletter: nothing to withdraw
    // (it withdrew the lapsed consent, on R1's receipt and as consent.purpose_revoked, claiming ads still granted).
    const r1: ChainLink = { ...link('r1', 0, { newsletter: granted, ads: granted, fraud: noticed }), lapsesAt: Date.parse(at(60)) };
    const chain = [r1];
    expect(recordInChain(chain, link('r2', 120, { newsletter: declined, ads: granted, fraud: noticed }), at(121)).withdrawals).toEqual([]);
    expect(r1.withdrawals).toEqual([]);
    // An objection to the legitimate interest it let stand still counts (a term ends consent, not the notice): the lapsed purposes read expired.
    const r3 = link('r3', 180, { newsletter: declined, ads: declined, fraud: { status: 'objected', basis: 'legitimate_interest' } });
    const late = recordInChain([{ ...r1, withdrawals: [] }], r3, at(181)).withdrawals;
    expect(late.map(({ withdrawn, objected, event, before }) => ({ withdrawn, objected, event, outcomes: outcomesAfterWithdrawal(before, withdrawn, objected) }))).toEqual([
      { withdrawn: [], objected: ['fraud'], event: 'consent.revoked', outcomes: { newsletter: 'expired', ads: 'expired', fraud: 'objected' } },
    ]);
    // Decided before the term ended (a late record of history), the newer decision still withdraws.
    const early = recordInChain([{ ...r1, withdrawals: [] }], link('r4', 30, { newsletter: declined, ads: granted, fraud: noticed }), at(182)).withdrawals;
    expect(early.map(({ recordId, withdrawn }) => ({ recordId, withdrawn }))).toEqual([{ recordId: 'r1', withdrawn: ['newsletter'] }]);
  });

  it('dates what a newer record withdraws or objects to by its decision, not by its write: a late record of history comes before the older consent\'s end', () => {
    // R1 10:00 grants newsletter, lets fraud stand, its term ends at 11:00; R2, decided at 10:30
    // (declining newsletter, objecting to fraud), is written at 13:00. In force when R2 was decided,
    // so R2 withdraws and objects; the older receipt must say so at 10:30, before its consent expired
    // at 11:00, not at 13:00 after it (a withdrawal of an expired consent, an objection out of order).
    const r1: ChainLink = { ...link('r1', 0, { newsletter: granted, fraud: noticed }), lapsesAt: Date.parse(at(60)) };
    const r2 = link('r2', 30, { newsletter: declined, fraud: { status: 'objected', basis: 'legitimate_interest' } });
    const { withdrawals } = recordInChain([r1], r2, at(180));
    expect(withdrawals.map(({ recordId, withdrawn, objected, at: made }) => ({ recordId, withdrawn, objected, at: made }))).toEqual([
      { recordId: 'r1', withdrawn: ['newsletter'], objected: ['fraud'], at: at(30) },
    ]);
    // The late record itself superseded at once by the record decided after it: at that record's decision.
    const r3 = link('r3', 20, { newsletter: granted, fraud: noticed });
    const chain: ChainLink[] = [{ ...r1, withdrawals: [] }, link('r4', 40, { newsletter: declined, fraud: noticed })];
    const placed = recordInChain(chain, r3, at(181));
    expect(placed.withdrawals.filter((w) => w.channel === 'newer_record').map(({ recordId, at: made }) => ({ recordId, at: made }))).toEqual([
      { recordId: 'r3', at: at(40) },
    ]);
  });

  it('carries a withdrawal the person made on the record it supersedes after its own decision', () => {
    // R1 10:00 grants analytics; the person withdraws it at 11:00; R2, captured 10:30, arrives after.
    const r1 = link('r1', 0, { analytics: granted, newsletter: granted, fraud: noticed }, [{ purpose: 'analytics', at: at(60), channel: 'own_records' }]);
    const chain = [r1];
    const r2 = link('r2', 30, { analytics: granted, newsletter: granted, fraud: noticed });
    const placed = recordInChain(chain, r2, at(90));
    expect(placed.withdrawals).toEqual([
      {
        recordId: 'r2',
        before: r2.purposes,
        withdrawn: ['analytics'],
        objected: [],
        event: 'consent.purpose_revoked',
        whole: false,
        at: at(60),
        channel: 'own_records',
        carriedFrom: 'r1',
      },
    ]);
    expect(r2.withdrawals).toEqual([{ purpose: 'analytics', at: at(60), channel: 'own_records' }]);
    // Nothing is withdrawn from R1 again: the person took analytics back there already.
    expect(r1.withdrawals).toHaveLength(1);
    // A withdrawal made before the decision stays where it was.
    const r3 = link('r3', 70, { analytics: granted, newsletter: granted, fraud: noticed });
    expect(recordInChain(chain, r3, at(95)).withdrawals).toEqual([]);
    expect(r3.withdrawals).toEqual([]);
  });

  /**
   * A person's history: records (distinct capture minutes), each arriving at or after its capture,
   * and withdrawals the person makes on the records page (on the newest record they have then, of a
   * purpose still granted there, or all of it), in time order.
   */
  const historyArbitrary = fc
    .uniqueArray(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 6 })
    .chain((minutes) =>
      fc.record({
        records: fc.tuple(
          ...minutes.map((minute, index) =>
            fc.record({
              recordId: fc.constant(`r${index}`),
              minute: fc.constant(minute),
              delay: fc.integer({ min: 0, max: 150 }),
              purposes: fc.record(
                { a: fc.constantFrom(granted, declined), b: fc.constantFrom(granted, declined), c: fc.constantFrom(granted, declined, noticed) },
                { requiredKeys: ['a'] },
              ),
            }),
          ),
        ),
        withdrawals: fc.array(fc.record({ minute: fc.integer({ min: 0, max: 260 }), purpose: fc.constantFrom<string | undefined>('a', 'b', 'c', undefined) }), { maxLength: 6 }),
      }),
    );

  type Step = { time: number; record?: ChainLink; withdraw?: string | null };

  const play = (history: { records: Array<{ recordId: string; minute: number; delay: number; purposes: Record<string, RecordedPurpose> }>; withdrawals: Array<{ minute: number; purpose?: string }> }) => {
    const steps: Step[] = [
      ...history.records.map((record) => ({ time: record.minute + record.delay, record: link(record.recordId, record.minute, record.purposes) })),
      ...history.withdrawals.map((withdrawal) => ({ time: withdrawal.minute + 0.5, withdraw: withdrawal.purpose ?? null })),
    ].sort((x, y) => x.time - y.time);
    const chain: ChainLink[] = [];
    for (const step of steps) {
      if (step.record) {
        recordInChain(chain, step.record, at(step.time));
        continue;
      }
      // The records page: only the newest record, only what is granted there now.
      const newest = chain[chain.length - 1];
      if (!newest) continue;
      const inForce = purposesInForce(newest.purposes, newest.withdrawals);
      const grantedNow = Object.keys(inForce).filter((key) => inForce[key].status === 'granted');
      const taken = step.withdraw === null ? grantedNow : grantedNow.filter((key) => key === step.withdraw);
      if (taken.length === 0) continue;
      const when = at(step.time);
      if (step.withdraw === null && withdrawsAllInForce(newest.purposes, taken)) newest.withdrawals.push({ at: when, channel: 'own_records' });
      else newest.withdrawals.push(...taken.map((purpose) => ({ purpose, at: when, channel: 'own_records' })));
    }
    return chain;
  };
  const entry = (record: ChainLink): RecordHistoryEntry => ({
    record_id: record.recordId,
    flow_id: 'flw',
    recorded_at: at(300),
    captured_at: new Date(record.capturedAt).toISOString(),
    purposes: record.purposes,
    withdrawn: record.withdrawals,
  });

  it('keeps the chain in made order whatever the order of arrival', () => {
    fc.assert(
      fc.property(historyArbitrary, (history) => {
        const chain = play(history);
        expect(chain.map((record) => record.capturedAt)).toEqual([...chain.map((record) => record.capturedAt)].sort((x, y) => x - y));
      }),
    );
  });

  it('backs consent_status by the deciding record\'s own withdrawals: every withdrawal that counts against it is on it', () => {
    fc.assert(
      fc.property(historyArbitrary, (history) => {
        const chain = play(history);
        const statuses = consentStatusOf(chain.map(entry));
        for (const [key, status] of Object.entries(statuses)) {
          const decider = chain.find((record) => record.recordId === status.record_id)!;
          expect([key, consentStatusOf([entry(decider)])[key]]).toEqual([key, status]);
        }
      }),
    );
  });
});
