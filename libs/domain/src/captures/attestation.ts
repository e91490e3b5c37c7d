import { DomainError, FieldIssue, validationFailed } from '../errors';
import type { PurposeStatus } from '../decisions/purpose-decisions';
import { FlowTerms, PurposeTerms } from '../flows/flow-terms';
import { isCapturable } from '../flows/capture';

/*
 * What a capture may attest: the rules shared by a capture from the organisation's form, a record
 * sent to the Record API and each row of an import. Pure: the caller has the flow version's terms.
 *
 * Decisions made where the specification leaves room:
 * - A decision on a notice-only purpose (contract, legal obligation, vital interest, public task) is
 *   refused by name, not ignored. The table says such a purpose takes "no decision", and "acceptance of
 *   terms of service is a contract purpose, not a consent checkbox": a caller that sends one treats it
 *   as a checkbox, and silently dropping it would record something other than what was shown. This is
 *   also what decidePurposes does on the hosted pages.
 * - A missing legitimate-interest purpose is recorded `noticed`, not refused. The refusal rule names
 *   only unknown purposes and missing consent purposes; an objection is an act, so silence on a
 *   right-to-object purpose means the processing stands (as on the hosted pages).
 * - A legitimate-interest purpose attested as mandatory is refused: a box that cannot be unticked
 *   denies the right to object (the flow terms refuse `required` on such a purpose for the same reason).
 *   Default-ticked is allowed, as the table says.
 * - A capture and a Record API record state both `default_checked` and `mandatory` of every decision
 *   (the specification: "a capture states the decision and its presentation"; its Record API table
 *   lists both without marking them optional): a missing one is refused by name, since a record
 *   that says nothing of how the box was shown cannot be told apart from one that attested `false`.
 *   Import rows carry only `{decision}` (history seldom kept it): there an absent flag means false,
 *   and the receipt says the presentation was attested, not observed. Present, they must be booleans. Any other field inside a decision is refused by name: a capture states the
 *   decision and its presentation, nothing else (a field we would drop is something the caller
 *   believes was recorded).
 * - A default-ticked or mandatory consent purpose is refused whatever the decision: the presentation
 *   itself was not a free choice, so neither a grant nor a decline from it is evidence.
 * - One issue per problem, each on field `decisions.<key>`: flow purposes first in flow order, then
 *   unknown keys in the order given. A purpose with two problems appears twice.
 */

export interface AttestedDecision {
  decision: 'granted' | 'declined';
  default_checked?: boolean;
  mandatory?: boolean;
}

/** Purpose key to what the person decided and how the box was presented. */
export type AttestedDecisions = Record<string, AttestedDecision>;

export interface RecordedPurpose {
  status: PurposeStatus;
  /** The purpose's legal basis in the flow version (`consent`, `legitimate_interest`, `contract`…). */
  basis: string;
}

export const ATTESTATION_REFUSED_MESSAGE = 'The decisions break the capture rules';

const ATTESTED_VALUES: readonly unknown[] = ['granted', 'declined'];
/** The fields a decision may carry. */
const DECISION_FIELDS: ReadonlySet<string> = new Set(['decision', 'default_checked', 'mandatory']);

const has = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How a caller states presentation: `stated` (captures, the Record API) needs both flags; `optional` (imports) reads a missing one as false. */
export type PresentationRule = 'stated' | 'optional';

/** Shape problems common to every purpose type; the presentation flags are read as booleans after. */
function shapeProblems(entry: Record<string, unknown>, presentation: PresentationRule): string[] {
  const problems: string[] = [];
  if (!ATTESTED_VALUES.includes(entry.decision)) problems.push('decision must be granted or declined');
  for (const flag of ['default_checked', 'mandatory'] as const) {
    if (entry[flag] === undefined) {
      if (presentation === 'stated') problems.push(`${flag} is missing: a capture states how the control was presented (true or false)`);
    } else if (typeof entry[flag] !== 'boolean') problems.push(`${flag} must be a boolean`);
  }
  for (const key of Object.keys(entry)) {
    if (!DECISION_FIELDS.has(key)) problems.push(`${key} is not a field of a decision (decision, default_checked, mandatory)`);
  }
  return problems;
}

/**
 * The shape of each decision, without the flow's terms (an object whose `decision` is granted or
 * declined, whose presentation flags are booleans, with no other field), named `decisions.<key>`:
 * what the edge names beside a body's other malformed fields (a bad `captured_at`, say), so that one
 * 422 names them all. The capture rules (recordAttestation) check the same again with the terms.
 */
export function decisionShapeIssues(decisions: unknown, presentation: PresentationRule = 'stated'): Array<{ field: string; reason: string }> {
  if (!isPlainObject(decisions)) return [];
  return Object.entries(decisions).flatMap(([key, entry]) =>
    isPlainObject(entry)
      ? shapeProblems(entry, presentation).map((reason) => ({ field: `decisions.${key}`, reason }))
      : [{ field: `decisions.${key}`, reason: 'must be an object {decision, default_checked, mandatory}' }],
  );
}

function consentProblems(entry: Record<string, unknown>, presentation: PresentationRule): string[] {
  const problems = shapeProblems(entry, presentation);
  if (entry.default_checked === true) {
    problems.push('a consent purpose shown ticked by default is refused: consent must be an active choice');
  }
  if (entry.mandatory === true) {
    problems.push('a consent purpose presented as mandatory is refused: consent cannot be a condition');
  }
  return problems;
}

function objectionProblems(entry: Record<string, unknown>, presentation: PresentationRule): string[] {
  const problems = shapeProblems(entry, presentation);
  if (entry.mandatory === true) {
    problems.push('a legitimate-interest purpose presented as mandatory is refused: the person may always object');
  }
  return problems;
}

/** What one flow purpose records, or why the attestation for it is refused. */
function judge(purpose: PurposeTerms, entry: unknown, present: boolean, presentation: PresentationRule): { status: PurposeStatus } | { problems: string[] } {
  if (!purpose.takes_decision) {
    if (!present) return { status: 'noticed' };
    return {
      problems: [`is a ${purpose.basis} purpose: notice-only, it takes no decision and must be left out of decisions`],
    };
  }
  const isConsent = purpose.basis === 'consent';
  if (!present) {
    // Silence is never a decline of consent; on a right-to-object purpose it is simply no objection.
    if (isConsent) return { problems: ['is missing: every consent purpose needs a decision; an unticked box is sent as declined'] };
    return { status: 'noticed' };
  }
  if (!isPlainObject(entry)) return { problems: ['must be an object {decision, default_checked, mandatory}'] };
  const problems = isConsent ? consentProblems(entry, presentation) : objectionProblems(entry, presentation);
  if (problems.length > 0) return { problems };
  if (isConsent) return { status: entry.decision as 'granted' | 'declined' };
  // Ticked keeps the legitimate interest standing; unticked is an objection on the register.
  return { status: entry.decision === 'granted' ? 'noticed' : 'objected' };
}

/**
 * Applies "What a capture may attest" to one capture, record or import row against the flow version's
 * terms. Throws `DomainError('validation_failed', …, details)` naming every offending purpose at once
 * (field `decisions.<key>`); see the module notes for the choices made. Returns every purpose of the
 * flow, in flow order: consent as `granted`/`declined`, legitimate interest as `noticed`/`objected`,
 * notice-only as `noticed`. `presentation`: whether every decision must state both flags (`stated`,
 * the default: captures and the Record API) or may leave them out (`optional`: import rows).
 */
export function recordAttestation(terms: FlowTerms, decisions: AttestedDecisions, presentation: PresentationRule = 'stated'): Record<string, RecordedPurpose> {
  if (!isPlainObject(decisions)) {
    throw validationFailed(
      [{ field: 'decisions', reason: 'must be an object of purpose key to {decision, default_checked, mandatory}' }],
      ATTESTATION_REFUSED_MESSAGE,
    );
  }
  const given = decisions as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const recorded: Record<string, RecordedPurpose> = {};
  const known = new Set<string>();

  for (const purpose of terms.purposes) {
    known.add(purpose.key);
    const present = has(given, purpose.key) && given[purpose.key] !== undefined;
    const verdict = judge(purpose, present ? given[purpose.key] : undefined, present, presentation);
    if ('problems' in verdict) {
      for (const reason of verdict.problems) issues.push({ field: `decisions.${purpose.key}`, reason });
    } else {
      recorded[purpose.key] = { status: verdict.status, basis: purpose.basis };
    }
  }
  for (const key of Object.keys(given)) {
    if (!known.has(key) && given[key] !== undefined) {
      issues.push({ field: `decisions.${key}`, reason: 'is not a purpose of this flow' });
    }
  }

  if (issues.length > 0) throw validationFailed(issues, ATTESTATION_REFUSED_MESSAGE);
  return recorded;
}

/**
 * The purpose keys whose decision states both presentation flags as booleans: the purposes whose
 * presentation the organisation attested (a receipt's `presentation_attested`). A purpose left out
 * (a legitimate interest not objected to), or an import row's decision without its flags, is not
 * among them: nothing was attested of how it was shown.
 */
export function statedPresentations(decisions: AttestedDecisions): string[] {
  if (!isPlainObject(decisions)) return [];
  return Object.entries(decisions as Record<string, unknown>)
    .filter(([, entry]) => isPlainObject(entry) && typeof entry.default_checked === 'boolean' && typeof entry.mandatory === 'boolean')
    .map(([key]) => key);
}

/**
 * Whether consent to the flow can be captured at all (see isCapturable): throws
 * `validation_failed` with one issue on `flow_id` per reason when it cannot.
 */
export function assertCapturable(terms: FlowTerms): void {
  const { capturable, reasons } = isCapturable(terms);
  if (capturable) return;
  throw new DomainError(
    'validation_failed',
    'The flow cannot be captured: its consent needs the hosted experience',
    reasons.map((reason) => ({ field: 'flow_id', reason })),
  );
}
