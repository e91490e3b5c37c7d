import { DomainError } from '../errors';

/**
 * The nine statuses a decision session (and the consent token it issues) can be in, ordered like the
 * state diagram: the standard path, the informed path, then the terminal statuses.
 */
export const DECISION_STATUSES = [
  'pending',
  'authenticating',
  'verifying',
  'reviewing',
  'informed',
  'evidenced',
  'fulfilled',
  'expired',
  'revoked',
] as const;

export type DecisionStatus = (typeof DECISION_STATUSES)[number];

/** Statuses of a session still under way: it may progress or expire. */
export const IN_FLIGHT_STATUSES: readonly DecisionStatus[] = [
  'pending',
  'authenticating',
  'verifying',
  'reviewing',
  'informed',
  'evidenced',
];

/**
 * The specification's terminal group: `fulfilled` (success, the only status that counts as
 * consented), `expired` (failure: lifetime passed, consumed, declined or cancelled) and `revoked`
 * (withdrawn). The session is over in all three. `fulfilled` is terminal for the *session* but the
 * consent it produced can still be withdrawn, so `fulfilled → revoked` is the one edge leaving a
 * terminal status; `expired` and `revoked` are final (no edge leaves them, see FINAL_STATUSES).
 */
export const TERMINAL_STATUSES: readonly DecisionStatus[] = ['fulfilled', 'expired', 'revoked'];

/** Terminal statuses nothing leaves: `expired` and `revoked`. */
export const FINAL_STATUSES: readonly DecisionStatus[] = ['expired', 'revoked'];

export const DECISION_KINDS = ['consent', 'approval'] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/**
 * Which in-flight path a session walks. An approval always walks `standard` (the approver signs in,
 * is verified and reviews); a consent session walks its flow's `pattern`.
 */
export const DECISION_PATHS = ['standard', 'informed'] as const;
export type DecisionPath = (typeof DECISION_PATHS)[number];

const STATUS_SET: ReadonlySet<string> = new Set(DECISION_STATUSES);
const IN_FLIGHT_SET: ReadonlySet<string> = new Set(IN_FLIGHT_STATUSES);
const TERMINAL_SET: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

export function isDecisionStatus(value: unknown): value is DecisionStatus {
  return typeof value === 'string' && STATUS_SET.has(value);
}

export function isDecisionKind(value: unknown): value is DecisionKind {
  return value === 'consent' || value === 'approval';
}

export function isDecisionPath(value: unknown): value is DecisionPath {
  return value === 'standard' || value === 'informed';
}

export function isInFlight(status: unknown): boolean {
  return typeof status === 'string' && IN_FLIGHT_SET.has(status);
}

export function isTerminal(status: unknown): boolean {
  return typeof status === 'string' && TERMINAL_SET.has(status);
}

/** The path a session walks: `standard` for every approval, the flow's pattern for a consent. */
export function decisionPathFor(kind: DecisionKind, flowPattern?: DecisionPath | null): DecisionPath {
  if (kind === 'approval') return 'standard';
  return flowPattern === 'informed' ? 'informed' : 'standard';
}

/** The forward steps of each path, from `pending` to `fulfilled`. */
export const DECISION_PATH_STEPS: Readonly<Record<DecisionPath, readonly DecisionStatus[]>> = {
  standard: ['pending', 'authenticating', 'verifying', 'reviewing', 'fulfilled'],
  informed: ['pending', 'informed', 'evidenced', 'fulfilled'],
};

/**
 * The one forward step after `status` on `path` (`pending → authenticating`, `reviewing →
 * fulfilled`, ...), or null when the status is not an in-flight status of that path.
 */
export function nextOnPath(status: DecisionStatus, path: DecisionPath): DecisionStatus | null {
  const steps = DECISION_PATH_STEPS[path];
  if (!steps) return null;
  const at = steps.indexOf(status);
  return at >= 0 && at < steps.length - 1 ? steps[at + 1] : null;
}

/**
 * Every legal next status from `status` on `path`, in a fixed order (the forward step first):
 * - an in-flight status of the path: its forward step, and `expired` (lifetime passed, deadline,
 *   decline or cancel);
 * - `fulfilled`: `revoked` (later withdrawal);
 * - `expired`, `revoked`, and an in-flight status that is not on the path (e.g. `informed` on the
 *   standard path): none.
 * A fresh array every call.
 */
export function nextStatuses(status: DecisionStatus, path: DecisionPath): DecisionStatus[] {
  if (status === 'fulfilled') return ['revoked'];
  if (!isInFlight(status)) return [];
  const forward = nextOnPath(status, path);
  return forward === null ? [] : [forward, 'expired'];
}

export function canTransition(from: DecisionStatus, to: DecisionStatus, path: DecisionPath): boolean {
  return nextStatuses(from, path).includes(to);
}

/** `a pending`, `an authenticating`: the status with its indefinite article. */
export const withArticle = (status: string): string => `${/^[aeiou]/.test(status) ? 'an' : 'a'} ${status}`;

/**
 * The refusal of an illegal move. Its body (the gateway spreads `extra` into the error body) reads
 * `{"code": "illegal_transition", "message", "status": <current>, "from": <current>, "to",
 * "allowed": [<legal next statuses>]}`, HTTP 409.
 */
export function illegalTransition(from: DecisionStatus, to: string, path: DecisionPath, message?: string): DomainError {
  return new DomainError('illegal_transition', message ?? `Cannot move ${withArticle(from)} decision to ${to}`, [], {
    status: from,
    from,
    to,
    allowed: nextStatuses(from, path),
  });
}

/**
 * Throws unless `from → to` is an edge of the graph on `path`:
 * - `to` not one of the nine statuses (e.g. a typo in `POST …/transitions {to}`): `validation_failed`
 *   naming the field `to`;
 * - otherwise an illegal move: `illegal_transition` (409) carrying `status`, `from`, `to` and
 *   `allowed` (see illegalTransition).
 */
export function assertTransition(from: DecisionStatus, to: DecisionStatus, path: DecisionPath): void {
  if (!isDecisionStatus(to)) {
    throw new DomainError('validation_failed', 'The transition is not valid', [
      { field: 'to', reason: `must be one of ${DECISION_STATUSES.join(', ')}` },
    ]);
  }
  if (!canTransition(from, to, path)) throw illegalTransition(from, to, path);
}
