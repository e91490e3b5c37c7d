import fc from 'fast-check';
import { DomainError } from '../errors';
import { flowInputOf, FlowTerms, normaliseFlowTerms, normaliseLocale, policyUrlProblem } from './flow-terms';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const minimal = { name: 'Newsletter', pattern: 'standard', purposes: ['marketing'] };

/** The field paths of the single refusal of `input`. */
function refusedFields(input: unknown): string[] {
  const error = refusal(() => normaliseFlowTerms(input));
  expect(error.code).toBe('validation_failed');
  expect(error.message).toBe('The flow is not valid');
  for (const issue of error.details!) expect(typeof issue.reason).toBe('string');
  return error.details!.map((issue) => issue.field);
}

describe('normaliseFlowTerms defaults', () => {
  it('fills every absent field', () => {
    expect(normaliseFlowTerms(minimal)).toEqual<FlowTerms>({
      name: 'Newsletter',
      pattern: 'standard',
      title: null,
      description: null,
      locale: 'en',
      policy_url: null,
      jurisdiction: null,
      consent_duration: null,
      retention: null,
      revocation_policy: null,
      data_fields: [],
      steps: [],
      purposes: [
        {
          key: 'marketing',
          label: 'marketing',
          description: null,
          basis: 'consent',
          mechanism: 'explicit',
          required: false,
          takes_decision: true,
        },
      ],
    });
  });

  it('treats null as absent for optional fields', () => {
    const nulls = Object.fromEntries(
      ['purpose_definitions', 'locale', 'title', 'description', 'policy_url', 'jurisdiction', 'consent_duration', 'retention', 'revocation_policy', 'data_fields', 'steps'].map((k) => [k, null]),
    );
    expect(normaliseFlowTerms({ ...minimal, ...nulls })).toEqual(normaliseFlowTerms(minimal));
  });

  it('resolves each basis to its mechanism and decision-taking', () => {
    const terms = normaliseFlowTerms({
      name: '  Shop  ',
      pattern: 'informed',
      purposes: ['marketing', 'research', 'analytics', 'tos', 'tax', 'emergency', 'census'],
      purpose_definitions: {
        marketing: { label: ' Marketing e-mails ', description: 'Offers', basis: 'consent' },
        research: { mechanism: 'informed' },
        analytics: { basis: 'legitimate_interest' },
        tos: { basis: 'contract', required: true, label: 'Terms of service' },
        tax: { basis: 'legal_obligation', mechanism: 'notice' },
        emergency: { basis: 'vital_interest', required: false },
        census: { basis: 'public_task', description: '   ' },
      },
      locale: 'de-de',
      title: ' Welcome ',
      description: '',
      policy_url: 'https://example.com/privacy',
      jurisdiction: ' EU ',
      consent_duration: 'P1Y',
      retention: 'Two years after the last order',
      revocation_policy: { channel: 'email', within_days: 30 },
      data_fields: ['email', { key: 'full_name', label: 'Full name', required: true }, { key: 'health', sensitive: true }],
      steps: [{ type: 'review', options: { compact: true } }],
    });
    expect(terms.name).toBe('Shop');
    expect(terms.title).toBe('Welcome');
    expect(terms.description).toBeNull();
    expect(terms.locale).toBe('de-DE');
    expect(terms.jurisdiction).toBe('EU');
    expect(terms.revocation_policy).toEqual({ channel: 'email', within_days: 30 });
    expect(terms.purposes.map((p) => [p.key, p.label, p.description, p.basis, p.mechanism, p.required, p.takes_decision])).toEqual([
      ['marketing', 'Marketing e-mails', 'Offers', 'consent', 'explicit', false, true],
      ['research', 'research', null, 'consent', 'informed', false, true],
      ['analytics', 'analytics', null, 'legitimate_interest', 'opt_out', false, true],
      ['tos', 'Terms of service', null, 'contract', 'notice', true, false],
      ['tax', 'tax', null, 'legal_obligation', 'notice', false, false],
      ['emergency', 'emergency', null, 'vital_interest', 'notice', false, false],
      ['census', 'census', null, 'public_task', 'notice', false, false],
    ]);
    expect(terms.data_fields).toEqual([
      { key: 'email', label: 'email', required: false, sensitive: false },
      { key: 'full_name', label: 'Full name', required: true, sensitive: false },
      { key: 'health', label: 'health', required: false, sensitive: true },
    ]);
    expect(terms.steps).toEqual([{ type: 'review', options: { compact: true } }]);
  });

  it('round-trips through flowInputOf', () => {
    const terms = normaliseFlowTerms({
      ...minimal,
      purposes: ['marketing', 'tos', 'analytics'],
      purpose_definitions: { tos: { basis: 'contract', required: true, description: 'The terms' }, analytics: { basis: 'legitimate_interest' } },
      consent_duration: 'P6M',
      retention: { period: 'P2Y' },
      data_fields: ['email'],
      steps: [{ type: 'notice' }],
      title: 'T',
    });
    expect(normaliseFlowTerms(flowInputOf(terms))).toEqual(terms);
    expect(normaliseFlowTerms(flowInputOf(normaliseFlowTerms(minimal)))).toEqual(normaliseFlowTerms(minimal));
  });
});

describe('normaliseFlowTerms refusals', () => {
  it('refuses a body that is not an object', () => {
    for (const body of [null, [], 'flow', 3]) expect(refusedFields(body)).toEqual(['body']);
  });

  it('lists every problem at once', () => {
    expect(refusedFields({ pattern: 'fancy', purposes: [] })).toEqual(['name', 'pattern', 'purposes']);
  });

  it.each([
    [{ name: '' }, ['name']],
    [{ name: '   ' }, ['name']],
    [{ name: 'x'.repeat(201) }, ['name']],
    [{ name: 7 }, ['name']],
    [{ pattern: undefined }, ['pattern']],
    [{ pattern: 'Standard' }, ['pattern']],
    [{ purposes: 'marketing' }, ['purposes']],
    [{ purposes: [] }, ['purposes']],
    [{ purposes: Array.from({ length: 101 }, (_, i) => `p${i}`) }, ['purposes']],
    [{ purposes: ['ok', 'Bad', 'also_ok', '9lives', 7, 'x'.repeat(65)] }, ['purposes[1]', 'purposes[3]', 'purposes[4]', 'purposes[5]']],
    [{ purposes: ['a', 'b', 'a'] }, ['purposes[2]']],
    [{ locale: 'english' }, ['locale']],
    [{ locale: 'en_GB' }, ['locale']],
    [{ locale: 5 }, ['locale']],
    [{ title: 'x'.repeat(201) }, ['title']],
    [{ description: ['d'] }, ['description']],
    [{ jurisdiction: '' }, ['jurisdiction']],
    [{ policy_url: 'http://example.com/privacy' }, ['policy_url']],
    [{ policy_url: '/privacy' }, ['policy_url']],
    [{ policy_url: 'ftp://example.com' }, ['policy_url']],
    [{ policy_url: 'https://user:pw@example.com' }, ['policy_url']],
    [{ policy_url: ' https://example.com' }, ['policy_url']],
    [{ consent_duration: '1 year' }, ['consent_duration']],
    [{ consent_duration: 'PT0S' }, ['consent_duration']],
    [{ consent_duration: 365 }, ['consent_duration']],
    [{ retention: '' }, ['retention']],
    [{ retention: 30 }, ['retention']],
    [{ revocation_policy: ['x'] }, ['revocation_policy']],
    [{ revocation_policy: { big: 'x'.repeat(17 * 1024) } }, ['revocation_policy']],
    [{ data_fields: 'email' }, ['data_fields']],
    [{ data_fields: ['email', 'E-mail', 3, { label: 'x' }, { key: 'a', required: 'yes', extra: 1 }, 'email'] }, [
      'data_fields[1]',
      'data_fields[2]',
      'data_fields[3].key',
      'data_fields[4].extra',
      'data_fields[4].required',
      'data_fields[5]',
    ]],
    [{ steps: { type: 'review' } }, ['steps']],
    [{ steps: Array.from({ length: 21 }, () => ({ type: 'review' })) }, ['steps']],
    [{ steps: [{ type: 'review' }, 'review', { kind: 'x' }, { type: '' }, { type: 'x', at: new Date() }] }, ['steps[1]', 'steps[2].type', 'steps[3].type', 'steps[4]']],
    [{ colour: 'red', application_id: 'tp_dev_x' }, ['colour', 'application_id']],
  ])('refuses %j naming %j', (change, fields) => {
    expect(refusedFields({ ...minimal, ...change })).toEqual(fields);
  });

  it.each([
    [{ sales: {} }, ['purpose_definitions.sales']],
    [{ marketing: 'consent' }, ['purpose_definitions.marketing']],
    [{ marketing: { basis: 'whim' } }, ['purpose_definitions.marketing.basis']],
    [{ marketing: { mechanism: 'opt_out' } }, ['purpose_definitions.marketing.mechanism']],
    [{ marketing: { basis: 'consent', mechanism: 'notice' } }, ['purpose_definitions.marketing.mechanism']],
    [{ marketing: { basis: 'legitimate_interest', mechanism: 'explicit' } }, ['purpose_definitions.marketing.mechanism']],
    [{ marketing: { basis: 'contract', mechanism: 'explicit' } }, ['purpose_definitions.marketing.mechanism']],
    [{ marketing: { basis: 'legal_obligation', mechanism: 'opt_out' } }, ['purpose_definitions.marketing.mechanism']],
    [{ marketing: { required: true } }, ['purpose_definitions.marketing.required']],
    [{ marketing: { basis: 'consent', mechanism: 'informed', required: true } }, ['purpose_definitions.marketing.required']],
    [{ marketing: { basis: 'legitimate_interest', required: true } }, ['purpose_definitions.marketing.required']],
    [{ marketing: { basis: 'contract', required: 'yes' } }, ['purpose_definitions.marketing.required']],
    [{ marketing: { label: '' } }, ['purpose_definitions.marketing.label']],
    [{ marketing: { label: 'x'.repeat(201), description: 'y'.repeat(2001) } }, ['purpose_definitions.marketing.label', 'purpose_definitions.marketing.description']],
    [{ marketing: { lable: 'typo' } }, ['purpose_definitions.marketing.lable']],
  ])('refuses purpose_definitions %j naming %j', (definitions, fields) => {
    expect(refusedFields({ ...minimal, purpose_definitions: definitions })).toEqual(fields);
  });

  it('refuses purpose_definitions that is not an object', () => {
    expect(refusedFields({ ...minimal, purpose_definitions: ['marketing'] })).toEqual(['purpose_definitions']);
  });

  it('explains a consent purpose that is required', () => {
    const error = refusal(() => normaliseFlowTerms({ ...minimal, purpose_definitions: { marketing: { required: true } } }));
    expect(error.details).toEqual([
      { field: 'purpose_definitions.marketing.required', reason: 'a consent purpose cannot be required: consent cannot be a condition' },
    ]);
  });

  it('accepts http policy URLs only on loopback', () => {
    expect(policyUrlProblem('http://localhost:3000/privacy')).toBeNull();
    expect(policyUrlProblem('http://127.0.0.1/privacy')).toBeNull();
    expect(policyUrlProblem('https://example.com')).toBeNull();
    expect(policyUrlProblem('http://localhost.example.com')).not.toBeNull();
    expect(normaliseFlowTerms({ ...minimal, policy_url: 'https://example.com' }).policy_url).toBe('https://example.com');
  });

  it('never throws anything but validation_failed, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            name: fc.oneof(fc.string(), fc.anything()),
            pattern: fc.constantFrom('standard', 'informed', 'other', undefined),
            purposes: fc.oneof(fc.array(fc.stringMatching(/^[a-z_]{1,6}$/), { maxLength: 5 }), fc.anything()),
            purpose_definitions: fc.anything(),
            locale: fc.anything(),
            policy_url: fc.oneof(fc.webUrl(), fc.anything()),
            consent_duration: fc.oneof(fc.constantFrom('P1Y', 'PT0S', 'P'), fc.anything()),
            data_fields: fc.anything(),
            steps: fc.anything(),
            retention: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        (input) => {
          try {
            normaliseFlowTerms(input);
          } catch (error) {
            expect(error).toBeInstanceOf(DomainError);
            expect((error as DomainError).code).toBe('validation_failed');
            expect((error as DomainError).details!.length).toBeGreaterThan(0);
          }
        },
      ),
    );
  });
});

describe('normaliseLocale', () => {
  it.each([
    ['en', 'en'],
    ['DE', 'de'],
    ['en-gb', 'en-GB'],
    ['zh-hant-tw', 'zh-Hant-TW'],
    ['es-419', 'es-419'],
    ['fil', 'fil'],
  ])('%s → %s', (raw, expected) => expect(normaliseLocale(raw)).toBe(expected));

  it.each(['', 'e', 'english', 'en_GB', 'en-', 'en-GBR', '12', null])('refuses %j', (raw) => expect(normaliseLocale(raw)).toBeNull());
});
