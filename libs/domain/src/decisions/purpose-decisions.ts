import { DomainError } from '../errors';
import type { FlowTerms } from '../flows';
import type { DecisionOutcome } from './outcomes';

/** Where a purpose stands after a decision on the hosted pages. */
export type PurposeStatus = 'granted' | 'declined' | 'objected' | 'noticed';

/**
 * The person's decision per purpose. Absent choices follow the outcome: a grant without a list
 * grants every consent purpose as presented, a decline declines them all; a legitimate-interest
 * purpose stands unless the person objects (false); notice-only purposes take no decision.
 */
export function decidePurposes(terms: FlowTerms, outcome: DecisionOutcome, given?: Record<string, boolean>): Record<string, PurposeStatus> {
  const known = new Map(terms.purposes.map((purpose) => [purpose.key, purpose]));
  const issues: { field: string; reason: string }[] = [];
  for (const [key, value] of Object.entries(given ?? {})) {
    const purpose = known.get(key);
    if (!purpose) issues.push({ field: `purposes.${key}`, reason: 'not a purpose of this flow' });
    else if (!purpose.takes_decision) issues.push({ field: `purposes.${key}`, reason: `${purpose.basis} purpose is notice-only and takes no decision` });
    else if (typeof value !== 'boolean') issues.push({ field: `purposes.${key}`, reason: 'must be true or false' });
  }
  // A grant with a list decides each consent purpose by the list: one it leaves out would otherwise be
  // granted by silence (the capture rules refuse a missing consent purpose by name, as here).
  if (given !== undefined && outcome === 'granted') {
    for (const purpose of terms.purposes) {
      if (purpose.takes_decision && purpose.basis !== 'legitimate_interest' && !Object.prototype.hasOwnProperty.call(given, purpose.key)) {
        issues.push({ field: `purposes.${purpose.key}`, reason: 'must be decided, true or false: a list of purposes names every consent purpose (without a list a grant grants them all)' });
      }
    }
  }
  if (issues.length > 0) throw new DomainError('validation_failed', 'The purposes are not valid', issues);

  const result: Record<string, PurposeStatus> = {};
  for (const purpose of terms.purposes) {
    const choice = given?.[purpose.key];
    if (!purpose.takes_decision) result[purpose.key] = 'noticed';
    else if (purpose.basis === 'legitimate_interest') result[purpose.key] = choice === false ? 'objected' : 'noticed';
    else if (outcome === 'declined') result[purpose.key] = 'declined';
    else result[purpose.key] = choice === undefined ? 'granted' : choice ? 'granted' : 'declined';
  }
  const consentKeys = terms.purposes.filter((p) => p.takes_decision && p.basis !== 'legitimate_interest').map((p) => p.key);
  if (outcome === 'granted' && consentKeys.length > 0 && !consentKeys.some((key) => result[key] === 'granted')) {
    throw new DomainError('validation_failed', 'Nothing is granted: complete with outcome declined instead', [
      { field: 'purposes', reason: 'a grant needs at least one consent purpose set to true' },
    ]);
  }
  return result;
}
