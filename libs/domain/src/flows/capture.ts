import { FlowTerms } from './flow-terms';

/**
 * Step types that only present the ask and take the decision: a flow made of these (or of no steps)
 * "needs only a decision" and can be captured inside the organisation's own form. Any other step
 * type (sign-in, identity or credential verification, data collection, bank, payment, signature, or a
 * type this list does not know) needs the hosted experience, so it makes the flow not capturable.
 */
export const DECISION_ONLY_STEP_TYPES: readonly string[] = [
  'consent',
  'decision',
  'disclosure',
  'notice',
  'purposes',
  'review',
  'summary',
  'terms',
];

export interface Capturability {
  capturable: boolean;
  /** Why not, one sentence per obstacle; empty when capturable. */
  reasons: string[];
}

/**
 * Whether consent to this flow can be captured in the organisation's form (rendered field, snippet,
 * hosted form builder, Record API or import). Per the specification a flow is capturable when its
 * consent needs only a decision (no verification, data-collection or bank step) and it declares a
 * consent duration. So:
 * - `consent_duration` must be set;
 * - `data_fields` must be empty: a capture carries decisions and how they were presented, never
 *   collected data, so a flow that collects data fields needs the hosted experience;
 * - every step must be one of DECISION_ONLY_STEP_TYPES.
 * The flow's pattern does not matter (an informed-mechanism consent can be attested by a capture).
 */
export function isCapturable(terms: FlowTerms): Capturability {
  const reasons: string[] = [];
  if (terms.consent_duration === null) reasons.push('the flow declares no consent_duration');
  if (terms.data_fields.length > 0) {
    reasons.push(
      `the flow collects data fields (${terms.data_fields.map((field) => field.key).join(', ')}); a capture carries only decisions`,
    );
  }
  terms.steps.forEach((step, index) => {
    if (!DECISION_ONLY_STEP_TYPES.includes(step.type)) {
      reasons.push(`steps[${index}] is a ${step.type} step, which needs the hosted experience`);
    }
  });
  return { capturable: reasons.length === 0, reasons };
}
