import { DomainError } from '../errors';
import { normaliseFlowTerms } from '../flows';
import { decidePurposes } from './purpose-decisions';

const terms = normaliseFlowTerms({
  name: 'Newsletter',
  pattern: 'standard',
  purposes: ['newsletter', 'analytics', 'fraud', 'billing'],
  purpose_definitions: {
    fraud: { basis: 'legitimate_interest' },
    billing: { basis: 'contract' },
  },
});

function issues(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, details: (error as DomainError).details };
  }
  throw new Error('expected a refusal');
}

describe('decidePurposes', () => {
  it('grants every consent purpose of a grant without a list; a legitimate interest stands; notice-only is noticed', () => {
    expect(decidePurposes(terms, 'granted')).toEqual({ newsletter: 'granted', analytics: 'granted', fraud: 'noticed', billing: 'noticed' });
  });

  it('follows the choices given: false declines a consent purpose and objects to a legitimate interest', () => {
    expect(decidePurposes(terms, 'granted', { newsletter: true, analytics: false, fraud: false })).toEqual({
      newsletter: 'granted',
      analytics: 'declined',
      fraud: 'objected',
      billing: 'noticed',
    });
  });

  it('declines every consent purpose on a decline, whatever was ticked', () => {
    expect(decidePurposes(terms, 'declined', { newsletter: true })).toMatchObject({ newsletter: 'declined', analytics: 'declined' });
  });

  it('refuses unknown and notice-only keys and non-boolean values, by name', () => {
    expect(issues(() => decidePurposes(terms, 'granted', { ads: true, billing: true, newsletter: 'yes' as unknown as boolean, analytics: true }))).toEqual({
      code: 'validation_failed',
      details: [
        { field: 'purposes.ads', reason: 'not a purpose of this flow' },
        { field: 'purposes.billing', reason: expect.stringContaining('notice-only') },
        { field: 'purposes.newsletter', reason: 'must be true or false' },
      ],
    });
  });

  it('refuses a grant whose list leaves a consent purpose out, by name, rather than granting it by silence; a legitimate interest left out stands', () => {
    expect(issues(() => decidePurposes(terms, 'granted', { newsletter: true }))).toEqual({
      code: 'validation_failed',
      details: [{ field: 'purposes.analytics', reason: expect.stringContaining('must be decided') }],
    });
    expect(issues(() => decidePurposes(terms, 'granted', {}))).toMatchObject({ details: [{ field: 'purposes.newsletter' }, { field: 'purposes.analytics' }] });
    expect(decidePurposes(terms, 'granted', { newsletter: true, analytics: false })).toEqual({ newsletter: 'granted', analytics: 'declined', fraud: 'noticed', billing: 'noticed' });
    // A decline declines every consent purpose, so its list needs none of them.
    expect(decidePurposes(terms, 'declined', { newsletter: true })).toMatchObject({ newsletter: 'declined', analytics: 'declined' });
  });

  it('refuses a grant that grants nothing', () => {
    expect(issues(() => decidePurposes(terms, 'granted', { newsletter: false, analytics: false }))).toEqual({
      code: 'validation_failed',
      details: [{ field: 'purposes', reason: expect.any(String) }],
    });
  });
});
