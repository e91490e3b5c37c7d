import { decidePurposes, DomainError, normaliseFlowTerms } from '@dcr/domain';
import { newsletterTerms } from '../testing';
import { grantedPurposes, grantRuleOf } from './granted-purposes';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('grantRuleOf: the three steps, in order', () => {
  it('1. an accepted opt-out grants, whatever else was recorded', () => {
    expect(grantRuleOf({ optOut: 'accepted' }, 'granted')).toBe('opt_out_accepted');
    expect(grantRuleOf({ optOut: 'accepted', consentField: false }, 'declined')).toBe('opt_out_accepted');
  });

  it('2. else a true consent field grants', () => {
    expect(grantRuleOf({ consentField: true }, 'granted')).toBe('consent_field');
    expect(grantRuleOf({ optOut: 'objected', consentField: true }, 'granted')).toBe('consent_field');
    expect(grantRuleOf({ consentField: true }, 'declined')).toBe('consent_field');
  });

  it('3. else, only when neither shape recorded it, completing the flow grants', () => {
    expect(grantRuleOf({}, 'granted')).toBe('flow_completed');
    expect(grantRuleOf({}, 'declined')).toBeNull();
    expect(grantRuleOf({ consentField: false }, 'granted')).toBeNull();
    expect(grantRuleOf({ optOut: 'objected' }, 'granted')).toBeNull();
  });
});

describe('grantedPurposes', () => {
  const terms = newsletterTerms();

  it('grants a consent purpose granted and a legitimate-interest purpose not objected, with decision-time labels', () => {
    const granted = grantedPurposes({
      purposes: terms.purposes,
      statuses: { marketing_email: 'granted', product_analytics: 'noticed', terms_of_service: 'noticed' },
      outcome: 'granted',
    });
    expect(granted).toEqual([
      {
        key: 'marketing_email',
        label: 'Send me the monthly newsletter',
        description: 'One e-mail a month about new features and offers. Unsubscribe at any time.',
        basis: 'consent',
        mechanism: 'explicit',
        grantedBy: 'consent_field',
      },
      {
        key: 'product_analytics',
        label: 'Measure how the newsletter is read',
        description: 'Open and click counts, kept for 13 months.',
        basis: 'legitimate_interest',
        mechanism: 'opt_out',
        grantedBy: 'opt_out_accepted',
      },
    ]);
  });

  it('never grants declined or objected purposes, and never lists notice-only ones', () => {
    const granted = grantedPurposes({
      purposes: terms.purposes,
      statuses: { marketing_email: 'declined', product_analytics: 'objected', terms_of_service: 'noticed' },
      outcome: 'granted',
    });
    expect(granted).toEqual([]);
  });

  it('lets completing the flow grant what no status recorded (step 3), only on a granted outcome', () => {
    expect(grantedPurposes({ purposes: terms.purposes, outcome: 'granted' }).map((p) => [p.key, p.grantedBy])).toEqual([
      ['marketing_email', 'flow_completed'],
      ['product_analytics', 'flow_completed'],
    ]);
    expect(grantedPurposes({ purposes: terms.purposes, outcome: 'declined' })).toEqual([]);
    expect(grantedPurposes({ purposes: terms.purposes, statuses: { product_analytics: 'noticed' }, outcome: 'declined' }).map((p) => p.key)).toEqual([
      'product_analytics',
    ]);
  });

  it("agrees with the decisions service's decidePurposes", () => {
    const statuses = decidePurposes(terms, 'granted', { marketing_email: true, product_analytics: false });
    expect(grantedPurposes({ purposes: terms.purposes, statuses, outcome: 'granted' }).map((p) => p.key)).toEqual(['marketing_email']);
    const declined = decidePurposes(terms, 'declined');
    expect(grantedPurposes({ purposes: terms.purposes, statuses: declined, outcome: 'declined' }).map((p) => p.key)).toEqual(['product_analytics']);
  });

  it('keeps the flow order and only the presented purposes', () => {
    const flow = normaliseFlowTerms({ name: 'F', pattern: 'standard', purposes: ['zeta', 'alpha', 'mid'] });
    expect(grantedPurposes({ purposes: flow.purposes, outcome: 'granted' }).map((p) => p.key)).toEqual(['zeta', 'alpha', 'mid']);
    expect(grantedPurposes({ purposes: flow.purposes, outcome: 'granted', presented: ['mid', 'zeta'] }).map((p) => p.key)).toEqual(['zeta', 'mid']);
  });

  it('refuses statuses that do not fit the purpose, naming each', () => {
    const error = refusal(() =>
      grantedPurposes({
        purposes: terms.purposes,
        statuses: { marketing_email: 'noticed', product_analytics: 'granted', terms_of_service: 'granted', unknown: 'granted' },
        outcome: 'granted',
      }),
    );
    expect(error.code).toBe('validation_failed');
    expect(error.details!.map((d) => d.field).sort()).toEqual([
      'statuses.marketing_email',
      'statuses.product_analytics',
      'statuses.terms_of_service',
      'statuses.unknown',
    ]);
  });

  it('refuses a status for a purpose that was not presented', () => {
    const error = refusal(() =>
      grantedPurposes({ purposes: terms.purposes, statuses: { product_analytics: 'noticed' }, outcome: 'granted', presented: ['marketing_email', 'nope'] }),
    );
    expect(error.details!.map((d) => d.field).sort()).toEqual(['presented.nope', 'statuses.product_analytics']);
  });
});
