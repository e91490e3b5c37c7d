import fc from 'fast-check';
import type { RecordedPurpose } from './attestation';
import { outcomesAfterWithdrawal, recordStatus, supersessionOf, withdrawsAllInForce } from './supersession';

const consent = (status: 'granted' | 'declined'): RecordedPurpose => ({ status, basis: 'consent' });
const li = (status: 'noticed' | 'objected'): RecordedPurpose => ({ status, basis: 'legitimate_interest' });
const notice: RecordedPurpose = { status: 'noticed', basis: 'contract' };

describe('supersessionOf', () => {
  it('treats a first record as a change that withdraws nothing', () => {
    expect(supersessionOf(null, { marketing: consent('granted'), tos: notice })).toEqual({
      changed: true,
      withdrawn: [],
      stillGranted: ['marketing'],
      objected: [],
      event: null,
    });
  });

  it('sees an identical record as a re-affirmation', () => {
    const purposes = { marketing: consent('granted'), sms: consent('declined') };
    expect(supersessionOf(purposes, { ...purposes })).toEqual({ changed: false, withdrawn: [], stillGranted: ['marketing'], objected: [], event: null });
  });

  it('withdraws one purpose while another stays granted: consent.purpose_revoked', () => {
    const result = supersessionOf(
      { marketing: consent('granted'), sms: consent('granted'), fraud: li('noticed') },
      { marketing: consent('declined'), sms: consent('granted'), fraud: li('objected') },
    );
    expect(result).toEqual({ changed: true, withdrawn: ['marketing'], stillGranted: ['sms'], objected: ['fraud'], event: 'consent.purpose_revoked' });
  });

  it('withdraws everything: consent.revoked', () => {
    const result = supersessionOf({ marketing: consent('granted'), sms: consent('granted') }, { marketing: consent('declined'), sms: consent('declined') });
    expect(result.withdrawn).toEqual(['marketing', 'sms']);
    expect(result.event).toBe('consent.revoked');
  });

  it('does not count a new grant as a withdrawal', () => {
    expect(supersessionOf({ marketing: consent('declined') }, { marketing: consent('granted') })).toMatchObject({ changed: true, withdrawn: [], event: null });
  });

  it('objects to a legitimate interest the earlier record let stand, with nothing else moving: an event of its own', () => {
    const earlier = { marketing: consent('granted'), fraud: li('noticed'), tos: notice };
    expect(supersessionOf(earlier, { marketing: consent('granted'), fraud: li('objected'), tos: notice })).toEqual({
      changed: true,
      withdrawn: [],
      stillGranted: ['marketing'],
      objected: ['fraud'],
      event: 'consent.purpose_revoked',
    });
    // Nothing granted after it: consent.revoked, whatever the earlier record let stand.
    expect(supersessionOf({ fraud: li('noticed'), tos: notice }, { fraud: li('objected'), tos: notice })).toMatchObject({ withdrawn: [], objected: ['fraud'], event: 'consent.revoked' });
  });

  it('moves nothing on the earlier record with an objection it did not let stand: objected already, or not held', () => {
    expect(supersessionOf({ marketing: consent('granted'), fraud: li('objected') }, { marketing: consent('granted'), fraud: li('objected') })).toMatchObject({ objected: [], event: null });
    expect(supersessionOf({ marketing: consent('granted') }, { marketing: consent('granted'), fraud: li('objected') })).toMatchObject({ objected: [], event: null });
  });

  it('leaves a purpose the new record does not hold to the earlier record', () => {
    const result = supersessionOf({ marketing: consent('granted'), sms: consent('granted') }, { sms: consent('declined') });
    expect(result).toEqual({ changed: true, withdrawn: ['sms'], stillGranted: ['marketing'], objected: [], event: 'consent.purpose_revoked' });
  });
});

describe('recordStatus', () => {
  it('is granted when anything is granted', () => {
    expect(recordStatus({ marketing: consent('declined'), sms: consent('granted') })).toBe('granted');
  });
  it('is declined when every consent purpose is declined, whatever else stands', () => {
    expect(recordStatus({ marketing: consent('declined'), fraud: li('noticed'), tos: notice })).toBe('declined');
  });
  it('without consent purposes: granted while a legitimate interest stands noticed, declined when every one was objected to, whatever the notices', () => {
    expect(recordStatus({ fraud: li('noticed'), tos: notice })).toBe('granted');
    expect(recordStatus({ fraud: li('noticed'), security: li('objected') })).toBe('granted');
    expect(recordStatus({ fraud: li('objected'), tos: notice })).toBe('declined');
    expect(recordStatus({ fraud: li('objected') })).toBe('declined');
  });
  it('a notice-only record is granted (completing it is the grant), an empty one declined', () => {
    expect(recordStatus({ tos: notice })).toBe('granted');
    expect(recordStatus({})).toBe('declined');
  });
});

const statusArbitrary = fc.constantFrom<RecordedPurpose['status']>('granted', 'declined', 'objected', 'noticed');
const purposesArbitrary = fc.dictionary(
  fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  statusArbitrary.map((status): RecordedPurpose => ({ status, basis: 'consent' })),
);
const granted = (purposes: Record<string, RecordedPurpose>) => new Set(Object.keys(purposes).filter((key) => purposes[key].status === 'granted'));

describe('supersessionOf properties', () => {
  it('withdrawn = granted before ∩ held but not granted after; event follows what remains granted', () => {
    fc.assert(
      fc.property(purposesArbitrary, purposesArbitrary, (previous, next) => {
        const result = supersessionOf(previous, next);
        const before = granted(previous);
        const expected = Object.keys(next).filter((key) => before.has(key) && next[key].status !== 'granted');
        expect(result.withdrawn).toEqual(expected);
        const remaining = new Set([...granted(next), ...[...before].filter((key) => !(key in next))]);
        expect(new Set(result.stillGranted)).toEqual(remaining);
        expect(result.event).toBe(expected.length === 0 ? null : remaining.size > 0 ? 'consent.purpose_revoked' : 'consent.revoked');
      }),
    );
  });

  it('objected = noticed legitimate interest before ∩ objected after; an objection alone is an event too', () => {
    const mixed = fc.dictionary(
      fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      fc.oneof(
        fc.constantFrom<'granted' | 'declined'>('granted', 'declined').map((status): RecordedPurpose => ({ status, basis: 'consent' })),
        fc.constantFrom<'noticed' | 'objected'>('noticed', 'objected').map((status): RecordedPurpose => ({ status, basis: 'legitimate_interest' })),
      ),
    );
    fc.assert(
      fc.property(mixed, mixed, (previous, next) => {
        const result = supersessionOf(previous, next);
        const expected = Object.keys(next).filter(
          (key) => next[key].status === 'objected' && previous[key]?.status === 'noticed' && previous[key]?.basis === 'legitimate_interest',
        );
        expect(result.objected).toEqual(expected);
        expect(result.event === null).toBe(result.withdrawn.length === 0 && expected.length === 0);
      }),
    );
  });

  it('is unchanged exactly when the statuses are equal purpose by purpose', () => {
    fc.assert(
      fc.property(purposesArbitrary, purposesArbitrary, (previous, next) => {
        const statuses = (purposes: Record<string, RecordedPurpose>) =>
          JSON.stringify(Object.keys(purposes).sort().map((key) => [key, purposes[key].status]));
        expect(supersessionOf(previous, next).changed).toBe(statuses(previous) !== statuses(next));
        expect(supersessionOf(next, next).changed).toBe(false);
      }),
    );
  });
});

describe('withdrawsAllInForce', () => {
  const purposes: Record<string, RecordedPurpose> = {
    newsletter: { status: 'granted', basis: 'consent' },
    analytics: { status: 'declined', basis: 'consent' },
    billing: { status: 'noticed', basis: 'contract' },
  };

  it('is a whole withdrawal when every granted purpose goes and nothing else the receipt lists stands', () => {
    expect(withdrawsAllInForce(purposes, ['newsletter'])).toBe(true);
    expect(withdrawsAllInForce(purposes, [])).toBe(false);
  });

  it('is by purpose while a noticed legitimate-interest purpose stands, or one objected to is not counted', () => {
    expect(withdrawsAllInForce({ ...purposes, fraud: { status: 'noticed', basis: 'legitimate_interest' } }, ['newsletter'])).toBe(false);
    expect(withdrawsAllInForce({ ...purposes, fraud: { status: 'objected', basis: 'legitimate_interest' } }, ['newsletter'])).toBe(true);
  });
});

describe('outcomesAfterWithdrawal', () => {
  it('marks what is withdrawn now or was before, and keeps every other purpose as it stands', () => {
    expect(
      outcomesAfterWithdrawal(
        { newsletter: { status: 'granted' }, analytics: { status: 'granted' }, fraud: { status: 'noticed' }, ads: { status: 'declined', withdrawn: true }, terms: { status: 'declined' } },
        ['analytics'],
      ),
    ).toEqual({ newsletter: 'granted', analytics: 'withdrawn', fraud: 'noticed', ads: 'withdrawn', terms: 'declined' });
  });

  it('marks a purpose a newer record objected to as objected, a withdrawal taking precedence', () => {
    expect(outcomesAfterWithdrawal({ newsletter: { status: 'granted' }, fraud: { status: 'noticed' }, terms: { status: 'noticed' } }, ['newsletter'], ['fraud'])).toEqual({
      newsletter: 'withdrawn',
      fraud: 'objected',
      terms: 'noticed',
    });
  });

  it('names every purpose of the record, withdrawn ones included, whatever is withdrawn', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.record({ status: fc.constantFrom('granted', 'declined', 'objected', 'noticed'), withdrawn: fc.boolean() })),
        fc.array(fc.stringMatching(/^[a-z]{1,8}$/)),
        (purposes, now) => {
          const outcomes = outcomesAfterWithdrawal(purposes, now);
          expect(Object.keys(outcomes).sort()).toEqual(Object.keys(purposes).sort());
          for (const [key, purpose] of Object.entries(purposes)) {
            expect(outcomes[key]).toBe(now.includes(key) || purpose.withdrawn ? 'withdrawn' : purpose.status);
          }
        },
      ),
    );
  });
});
