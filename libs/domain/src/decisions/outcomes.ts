import { DomainError } from '../errors';
import { DecisionKind, DecisionPath, DecisionStatus, illegalTransition, withArticle } from './state-machine';

export const CONSENT_OUTCOMES = ['granted', 'declined'] as const;
export type ConsentOutcome = (typeof CONSENT_OUTCOMES)[number];

export const APPROVAL_OUTCOMES = ['approved', 'denied', 'countered'] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

export type DecisionOutcome = ConsentOutcome | ApprovalOutcome;

/**
 * Every spelling the interface uses for an outcome, per kind, and the canonical value it means. The
 * specification lists both spellings (`declined`/`denied` for consent; `approve`, `deny`, `counter`
 * beside `approved`, `denied`, `countered` for approval) and requires all of them to be accepted.
 */
export const OUTCOME_SPELLINGS: {
  readonly consent: Readonly<Record<string, ConsentOutcome>>;
  readonly approval: Readonly<Record<string, ApprovalOutcome>>;
} = {
  consent: { granted: 'granted', declined: 'declined', denied: 'declined' },
  approval: {
    approved: 'approved',
    approve: 'approved',
    denied: 'denied',
    deny: 'denied',
    declined: 'denied',
    countered: 'countered',
    counter: 'countered',
  },
};

/**
 * The canonical outcome for `raw` (trimmed, case-insensitive), or `validation_failed` naming the
 * field `outcome` with the accepted values. A kind's outcomes are never accepted for the other kind
 * (`approved` is not a consent outcome).
 */
export function normaliseOutcome(kind: 'consent', raw: unknown): ConsentOutcome;
export function normaliseOutcome(kind: 'approval', raw: unknown): ApprovalOutcome;
export function normaliseOutcome(kind: DecisionKind, raw: unknown): DecisionOutcome;
export function normaliseOutcome(kind: DecisionKind, raw: unknown): DecisionOutcome {
  const spellings = OUTCOME_SPELLINGS[kind];
  if (!spellings) throw new RangeError(`unknown decision kind ${String(kind)}`);
  if (typeof raw === 'string') {
    const key = raw.trim().toLowerCase();
    if (Object.prototype.hasOwnProperty.call(spellings, key)) return spellings[key];
  }
  throw new DomainError('validation_failed', `The ${kind} outcome is not valid`, [
    { field: 'outcome', reason: `must be one of ${Object.keys(spellings).join(', ')}` },
  ]);
}

/**
 * The status a session ends in when completed with `outcome`: `fulfilled` for `granted` and
 * `approved`; `expired` for `declined`, `denied` and `countered` (the ask ended without
 * authorisation; the outcome itself is stored beside the status, which is what tells them apart).
 */
export function completionStatus(outcome: DecisionOutcome): 'fulfilled' | 'expired' {
  return outcome === 'granted' || outcome === 'approved' ? 'fulfilled' : 'expired';
}

/** The one status from which `complete` is accepted: `reviewing` (standard), `evidenced` (informed). */
export function completableFrom(path: DecisionPath): 'reviewing' | 'evidenced' {
  return path === 'informed' ? 'evidenced' : 'reviewing';
}

/**
 * Throws `illegal_transition` (409) unless a session in `status` on `path` may be completed. The body
 * carries `status`, `from`, `to` (`fulfilled`), `allowed` (the legal next statuses from `status`) and
 * `completable_from` (the status completion needs).
 */
export function assertCompletable(status: DecisionStatus, path: DecisionPath): void {
  const needed = completableFrom(path);
  if (status === needed) return;
  const error = illegalTransition(status, 'fulfilled', path, `Cannot complete ${withArticle(status)} decision; it must be ${needed}`);
  throw new DomainError(error.code, error.message, error.details, { ...error.extra, completable_from: needed });
}

/** The webhook event type of a completed decision. */
export type DecisionEventType =
  | 'consent.granted'
  | 'consent.denied'
  | 'approval.granted'
  | 'approval.denied'
  | 'approval.countered';

const EVENT_TYPES: Record<DecisionKind, Partial<Record<DecisionOutcome, DecisionEventType>>> = {
  consent: { granted: 'consent.granted', declined: 'consent.denied' },
  approval: { approved: 'approval.granted', denied: 'approval.denied', countered: 'approval.countered' },
};

/**
 * consent granted → `consent.granted`, declined → `consent.denied`; approval approved →
 * `approval.granted`, denied → `approval.denied`, countered → `approval.countered`. Expects a
 * canonical outcome of the same kind (see normaliseOutcome); anything else is a programming error
 * (RangeError).
 */
export function eventTypeFor(kind: 'consent', outcome: ConsentOutcome): DecisionEventType;
export function eventTypeFor(kind: 'approval', outcome: ApprovalOutcome): DecisionEventType;
export function eventTypeFor(kind: DecisionKind, outcome: DecisionOutcome): DecisionEventType;
export function eventTypeFor(kind: DecisionKind, outcome: DecisionOutcome): DecisionEventType {
  const type = EVENT_TYPES[kind]?.[outcome];
  if (!type) throw new RangeError(`${String(outcome)} is not a ${String(kind)} outcome`);
  return type;
}
