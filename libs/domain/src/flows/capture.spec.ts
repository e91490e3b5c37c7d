import { isCapturable } from './capture';
import { normaliseFlowTerms } from './flow-terms';
import { noticeContent, noticeFingerprint, termsDiffer, termsFingerprint } from './fingerprint';

const base = { name: 'Newsletter', pattern: 'standard', purposes: ['marketing'], consent_duration: 'P1Y' };

describe('isCapturable', () => {
  it('accepts a decision-only flow with a consent duration', () => {
    expect(isCapturable(normaliseFlowTerms(base))).toEqual({ capturable: true, reasons: [] });
    const withNoticeSteps = normaliseFlowTerms({
      ...base,
      pattern: 'informed',
      purposes: ['marketing', 'tos', 'analytics'],
      purpose_definitions: { marketing: { mechanism: 'informed' }, tos: { basis: 'contract', required: true }, analytics: { basis: 'legitimate_interest' } },
      steps: [{ type: 'notice' }, { type: 'review' }, { type: 'decision' }],
    });
    expect(isCapturable(withNoticeSteps)).toEqual({ capturable: true, reasons: [] });
  });

  it('refuses a flow without a consent duration', () => {
    const result = isCapturable(normaliseFlowTerms({ ...base, consent_duration: undefined }));
    expect(result.capturable).toBe(false);
    expect(result.reasons).toEqual(['the flow declares no consent_duration']);
  });

  it('refuses a flow that collects data or needs a hosted step, naming each', () => {
    const result = isCapturable(
      normaliseFlowTerms({
        ...base,
        data_fields: ['email'],
        steps: [{ type: 'review' }, { type: 'verification' }, { type: 'bank' }, { type: 'sign_in' }],
      }),
    );
    expect(result.capturable).toBe(false);
    expect(result.reasons).toHaveLength(4);
    expect(result.reasons[0]).toMatch(/data fields \(email\)/);
    expect(result.reasons.slice(1)).toEqual([
      'steps[1] is a verification step, which needs the hosted experience',
      'steps[2] is a bank step, which needs the hosted experience',
      'steps[3] is a sign_in step, which needs the hosted experience',
    ]);
  });
});

describe('fingerprints', () => {
  it('is lower-case hex sha256, equal for equal terms whatever the input order', () => {
    const a = normaliseFlowTerms({ ...base, purpose_definitions: { marketing: { label: 'M', basis: 'consent' } }, retention: { b: 1, a: 2 } });
    const b = normaliseFlowTerms({ retention: { a: 2, b: 1 }, purpose_definitions: { marketing: { basis: 'consent', label: 'M' } }, consent_duration: 'P1Y', purposes: ['marketing'], pattern: 'standard', name: 'Newsletter' });
    expect(termsFingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(termsFingerprint(a)).toBe(termsFingerprint(b));
    expect(termsDiffer(a, b)).toBe(false);
  });

  it('changes with any term', () => {
    const a = normaliseFlowTerms(base);
    for (const change of [{ consent_duration: 'P2Y' }, { name: 'Other' }, { purposes: ['marketing', 'sms'] }, { locale: 'de' }, { purpose_definitions: { marketing: { label: 'M' } } }]) {
      expect(termsDiffer(a, normaliseFlowTerms({ ...base, ...change }))).toBe(true);
    }
  });

  it('fingerprints the notice over locale, presentation, policy URL and purpose rows sorted by name', () => {
    const a = normaliseFlowTerms({ ...base, purposes: ['sms', 'marketing'], title: 'T', policy_url: 'https://example.com/p' });
    const b = normaliseFlowTerms({ ...base, purposes: ['marketing', 'sms'], title: 'T', policy_url: 'https://example.com/p', consent_duration: 'P2Y' });
    expect(noticeContent(a).purposes.map((p) => p.name)).toEqual(['marketing', 'sms']);
    expect(noticeContent(a)).toEqual({
      locale: 'en',
      title: 'T',
      description: null,
      policy_url: 'https://example.com/p',
      purposes: [
        { name: 'marketing', label: 'marketing', description: null, mechanism: 'explicit', required: false },
        { name: 'sms', label: 'sms', description: null, mechanism: 'explicit', required: false },
      ],
    });
    expect(noticeFingerprint(a)).toBe(noticeFingerprint(b));
    expect(noticeFingerprint(a)).not.toBe(noticeFingerprint(normaliseFlowTerms({ ...base, purposes: ['sms', 'marketing'], title: 'T2' })));
  });
});
