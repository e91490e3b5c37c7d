import fc from 'fast-check';
import { DomainError } from '../errors';
import {
  APPROVAL_OUTCOMES,
  assertCompletable,
  completableFrom,
  completionStatus,
  CONSENT_OUTCOMES,
  eventTypeFor,
  normaliseOutcome,
} from './outcomes';
import { DECISION_STATUSES } from './state-machine';
import { deadlineLevel, deadlineTicks, DEADLINE_TICKS_SECONDS } from './deadlines';
import { APPROVAL_TRIGGERS, isApprovalTrigger } from './approvals';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('normaliseOutcome', () => {
  it.each([
    ['granted', 'granted'],
    ['declined', 'declined'],
    ['denied', 'declined'],
    [' GRANTED ', 'granted'],
    ['Denied', 'declined'],
  ])('consent %j → %s', (raw, expected) => expect(normaliseOutcome('consent', raw)).toBe(expected));

  it.each([
    ['approved', 'approved'],
    ['approve', 'approved'],
    ['denied', 'denied'],
    ['deny', 'denied'],
    ['declined', 'denied'],
    ['countered', 'countered'],
    ['counter', 'countered'],
    ['  Approve\n', 'approved'],
    ['COUNTER', 'countered'],
  ])('approval %j → %s', (raw, expected) => expect(normaliseOutcome('approval', raw)).toBe(expected));

  it.each([
    ['consent', 'approved'],
    ['consent', 'countered'],
    ['consent', 'grant'],
    ['consent', ''],
    ['consent', null],
    ['consent', true],
    ['approval', 'granted'],
    ['approval', 'yes'],
    ['approval', undefined],
    ['approval', ['approved']],
    ['approval', 'toString'],
    ['consent', '__proto__'],
  ] as const)('%s refuses %j naming outcome', (kind, raw) => {
    const error = refusal(() => normaliseOutcome(kind, raw));
    expect(error.code).toBe('validation_failed');
    expect(error.details).toHaveLength(1);
    expect(error.details![0].field).toBe('outcome');
    expect(error.details![0].reason).toMatch(/^must be one of /);
  });

  it('always answers a canonical outcome of its kind, or refuses', () => {
    fc.assert(
      fc.property(fc.constantFrom('consent' as const, 'approval' as const), fc.anything(), (kind, raw) => {
        let outcome: string;
        try {
          outcome = normaliseOutcome(kind, raw);
        } catch (error) {
          expect((error as DomainError).code).toBe('validation_failed');
          return;
        }
        expect((kind === 'consent' ? CONSENT_OUTCOMES : APPROVAL_OUTCOMES) as readonly string[]).toContain(outcome);
      }),
    );
  });
});

describe('completion', () => {
  it('fulfils on granted and approved, expires otherwise', () => {
    expect(completionStatus('granted')).toBe('fulfilled');
    expect(completionStatus('approved')).toBe('fulfilled');
    expect(completionStatus('declined')).toBe('expired');
    expect(completionStatus('denied')).toBe('expired');
    expect(completionStatus('countered')).toBe('expired');
  });

  it('is accepted only from reviewing (standard) or evidenced (informed)', () => {
    expect(completableFrom('standard')).toBe('reviewing');
    expect(completableFrom('informed')).toBe('evidenced');
    for (const path of ['standard', 'informed'] as const) {
      for (const status of DECISION_STATUSES) {
        if (status === completableFrom(path)) {
          expect(() => assertCompletable(status, path)).not.toThrow();
          continue;
        }
        const error = refusal(() => assertCompletable(status, path));
        expect(error.code).toBe('illegal_transition');
        expect(error.extra).toMatchObject({ status, from: status, to: 'fulfilled', completable_from: completableFrom(path) });
        expect(Array.isArray(error.extra?.allowed)).toBe(true);
      }
    }
    expect(refusal(() => assertCompletable('pending', 'standard')).extra?.allowed).toEqual(['authenticating', 'expired']);
  });
});

describe('eventTypeFor', () => {
  it.each([
    ['consent', 'granted', 'consent.granted'],
    ['consent', 'declined', 'consent.denied'],
    ['approval', 'approved', 'approval.granted'],
    ['approval', 'denied', 'approval.denied'],
    ['approval', 'countered', 'approval.countered'],
  ] as const)('%s %s → %s', (kind, outcome, type) => expect(eventTypeFor(kind, outcome)).toBe(type));

  it('refuses an outcome of the other kind', () => {
    expect(() => eventTypeFor('consent', 'approved')).toThrow(RangeError);
    expect(() => eventTypeFor('approval', 'granted')).toThrow(RangeError);
  });

  it('composes with normaliseOutcome for every accepted spelling', () => {
    expect(eventTypeFor('consent', normaliseOutcome('consent', 'denied'))).toBe('consent.denied');
    expect(eventTypeFor('approval', normaliseOutcome('approval', 'counter'))).toBe('approval.countered');
    expect(eventTypeFor('approval', normaliseOutcome('approval', 'declined'))).toBe('approval.denied');
  });
});

describe('deadlines', () => {
  it('ticks at T-30, T-15, T-5 and T-0', () => {
    expect(DEADLINE_TICKS_SECONDS).toEqual([30, 15, 5, 0]);
  });

  it('warns while time remains and expires at zero or later', () => {
    expect(deadlineLevel(30)).toBe('warning');
    expect(deadlineLevel(0.5)).toBe('warning');
    expect(deadlineLevel(0)).toBe('expired');
    expect(deadlineLevel(-3)).toBe('expired');
    expect(() => deadlineLevel(Number.NaN)).toThrow(RangeError);
  });

  it('lists the ticks of a deadline, dropping the past ones but never T-0', () => {
    const deadline = new Date('2030-01-01T00:01:00.000Z');
    const all = deadlineTicks(deadline);
    expect(all.map((t) => [t.remaining_seconds, t.level, t.fires_at.toISOString()])).toEqual([
      [30, 'warning', '2030-01-01T00:00:30.000Z'],
      [15, 'warning', '2030-01-01T00:00:45.000Z'],
      [5, 'warning', '2030-01-01T00:00:55.000Z'],
      [0, 'expired', '2030-01-01T00:01:00.000Z'],
    ]);
    expect(all.every((t) => t.deadline_at === '2030-01-01T00:01:00.000Z')).toBe(true);
    expect(deadlineTicks(deadline, new Date('2030-01-01T00:00:50.000Z')).map((t) => t.remaining_seconds)).toEqual([5, 0]);
    expect(deadlineTicks(deadline, new Date('2030-01-01T00:05:00.000Z')).map((t) => t.remaining_seconds)).toEqual([0]);
  });
});

describe('approval triggers', () => {
  it('are the six bound types', () => {
    expect(APPROVAL_TRIGGERS).toEqual(['scope', 'action', 'value', 'time', 'escalation', 'reputation']);
    expect(isApprovalTrigger('value')).toBe(true);
    expect(isApprovalTrigger('jurisdiction')).toBe(false);
  });
});
