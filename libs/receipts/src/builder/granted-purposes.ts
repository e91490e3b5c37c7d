import { ConsentOutcome, DomainError, FieldIssue, LegalBasis, PurposeMechanism, PurposeStatus, PurposeTerms } from '@dcr/domain';

/**
 * What a purpose's decision recorded, in the two shapes the spec's grant rule reads:
 * - `optOut`: the result of a right-to-object (legitimate-interest) purpose, `accepted` when the
 *   person did not object;
 * - `consentField`: the consent field (ticked or not).
 * Neither set means neither shape recorded the purpose.
 */
export interface RecordedDecision {
  optOut?: 'accepted' | 'objected';
  consentField?: boolean;
}

/** Which step of "How a purpose counts as granted" granted a purpose. */
export type GrantRule = 'opt_out_accepted' | 'consent_field' | 'flow_completed';

/**
 * "How a purpose counts as granted", per purpose, in order:
 * 1. an opt-out result of `accepted` grants;
 * 2. else the consent field being true grants;
 * 3. else, when neither shape recorded the purpose, completing the flow (outcome `granted`) grants.
 * A recorded objection or an unticked consent field is a recorded decision, so step 3 never applies
 * to it. Answers the step that granted, or null.
 */
export function grantRuleOf(recorded: RecordedDecision, outcome: ConsentOutcome): GrantRule | null {
  if (recorded.optOut === 'accepted') return 'opt_out_accepted';
  if (recorded.consentField === true) return 'consent_field';
  if (recorded.optOut === undefined && recorded.consentField === undefined) return outcome === 'granted' ? 'flow_completed' : null;
  return null;
}

/** A granted purpose with the label, description, basis and mechanism presented at decision time. */
export interface GrantedPurpose {
  key: string;
  label: string;
  description: string | null;
  basis: LegalBasis;
  mechanism: PurposeMechanism;
  grantedBy: GrantRule;
}

/**
 * What the decisions service knows at commit: the flow version's purpose terms (decision-time labels),
 * the per-purpose statuses it recorded (`decidePurposes`, a capture's or a record's decisions), and
 * the completion outcome.
 */
export interface PurposeDecisionFacts {
  /** The flow version's purposes, in flow order. */
  purposes: readonly PurposeTerms[];
  /** Per purpose key; a purpose without an entry was recorded by neither shape. */
  statuses?: Readonly<Record<string, PurposeStatus | undefined>>;
  /** The completion outcome (`granted` or `declined`). */
  outcome: ConsentOutcome;
  /** Only these purpose keys were presented (a consent field rendering a subset); default all. */
  presented?: readonly string[];
}

const OPT_OUT_OF: Partial<Record<PurposeStatus, RecordedDecision>> = {
  noticed: { optOut: 'accepted' },
  objected: { optOut: 'objected' },
};
const CONSENT_FIELD_OF: Partial<Record<PurposeStatus, RecordedDecision>> = {
  granted: { consentField: true },
  declined: { consentField: false },
};

/**
 * The granted purposes, in flow order, per the spec's rule. A legitimate-interest purpose recorded as
 * `noticed` (not objected) is an accepted opt-out and is granted; `objected` and `declined` are not;
 * a consent purpose's `granted`/`declined` is its consent field. Notice-only purposes (contract,
 * legal obligation, ...) take no decision and never appear. A status that does not fit the purpose's
 * basis, or a status for a purpose the flow does not declare, is refused (`validation_failed`).
 */
export function grantedPurposes(facts: PurposeDecisionFacts): GrantedPurpose[] {
  const issues: FieldIssue[] = [];
  const statuses = facts.statuses ?? {};
  const declared = new Set(facts.purposes.map((purpose) => purpose.key));
  for (const key of Object.keys(statuses)) {
    if (!declared.has(key)) issues.push({ field: `statuses.${key}`, reason: 'is not a purpose of this flow' });
  }
  const presented = facts.presented ? new Set(facts.presented) : undefined;
  for (const key of presented ?? []) {
    if (!declared.has(key)) issues.push({ field: `presented.${key}`, reason: 'is not a purpose of this flow' });
  }

  const granted: GrantedPurpose[] = [];
  for (const purpose of facts.purposes) {
    if (presented && !presented.has(purpose.key)) {
      if (statuses[purpose.key] !== undefined) issues.push({ field: `statuses.${purpose.key}`, reason: 'was not presented' });
      continue;
    }
    const status = statuses[purpose.key];
    if (!purpose.takes_decision) {
      if (status !== undefined && status !== 'noticed') {
        issues.push({ field: `statuses.${purpose.key}`, reason: `a ${purpose.basis} purpose is notice-only; it can only be noticed` });
      }
      continue;
    }
    let recorded: RecordedDecision = {};
    if (status !== undefined) {
      const shape = purpose.basis === 'legitimate_interest' ? OPT_OUT_OF[status] : CONSENT_FIELD_OF[status];
      if (!shape) {
        issues.push({
          field: `statuses.${purpose.key}`,
          reason:
            purpose.basis === 'legitimate_interest'
              ? 'a legitimate-interest purpose is noticed or objected'
              : 'a consent purpose is granted or declined',
        });
        continue;
      }
      recorded = shape;
    }
    const rule = grantRuleOf(recorded, facts.outcome);
    if (rule) {
      granted.push({
        key: purpose.key,
        label: purpose.label,
        description: purpose.description,
        basis: purpose.basis,
        mechanism: purpose.mechanism,
        grantedBy: rule,
      });
    }
  }
  if (issues.length > 0) throw new DomainError('validation_failed', 'The purpose decisions are not valid', issues);
  return granted;
}
