import fc from 'fast-check';
import { DomainError } from '../errors';
import { FlowTerms, normaliseFlowTerms } from '../flows';
import { parseTypeformDefinition } from './form-definition';
import { CHOICE_DECISION_FIELD_TYPES, FormMappingInput, resolveFormMapping } from './mapping';

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

const refusedFields = (run: () => unknown) => refusal(run).details!.map((issue) => issue.field);

/** newsletter and analytics (consent), fraud (legitimate interest, right to object), billing (contract). */
const terms = normaliseFlowTerms({
  name: 'Sign-up',
  pattern: 'standard',
  consent_duration: 'P1Y',
  purposes: ['newsletter', 'analytics', 'fraud', 'billing'],
  purpose_definitions: { fraud: { basis: 'legitimate_interest' }, billing: { basis: 'contract', required: true } },
});

/** What Typeform's GET /forms/{form_id} answers, reduced to what matters here. */
const typeformForm = {
  id: 'lT4Z3j',
  title: 'Sign up',
  hidden: ['crm_id'],
  fields: [
    { id: 'f_email', ref: 'email_q', type: 'email', title: 'Your e-mail', validations: { required: true } },
    { id: 'f_news', ref: 'newsletter_q', type: 'yes_no', title: 'Newsletter?', validations: { required: false } },
    {
      id: 'f_analytics',
      ref: 'analytics_q',
      type: 'multiple_choice',
      title: 'Analytics?',
      properties: {
        allow_multiple_selection: false,
        choices: [
          { id: 'c_yes', ref: 'analytics_yes', label: 'Yes, measure my visits' },
          { id: 'c_no', ref: 'analytics_no', label: 'No' },
        ],
      },
    },
    {
      id: 'f_topics',
      ref: 'topics_q',
      type: 'multiple_choice',
      title: 'Write to me about',
      properties: {
        allow_multiple_selection: true,
        choices: [
          { id: 't_news', ref: 'topic_news', label: 'News' },
          { id: 't_measure', ref: 'topic_measure', label: 'Measuring my visits' },
        ],
      },
    },
    { id: 'f_fraud', ref: 'fraud_q', type: 'yes_no', title: 'Object to fraud checks?', validations: { required: true } },
    { id: 'f_terms', ref: 'terms_q', type: 'legal', title: 'I accept the terms', validations: { required: true } },
    { id: 'f_legal_optional', ref: 'legal_q', type: 'legal', title: 'Partners may write to me' },
    { id: 'f_rating', ref: 'rating_q', type: 'rating', title: 'Rate us' },
    { id: 'f_number', ref: 'number_q', type: 'number', title: 'How many?' },
    { id: 'f_scale', ref: 'scale_q', type: 'opinion_scale', title: 'How likely?' },
    { id: 'f_short', ref: 'name_q', type: 'short_text', title: 'Name' },
    { id: 'f_long', ref: 'bio_q', type: 'long_text', title: 'About you' },
    { id: 'f_date', ref: 'date_q', type: 'date', title: 'Birthday' },
    {
      id: 'f_group',
      ref: 'group_q',
      type: 'group',
      title: 'More',
      properties: {
        fields: [
          {
            id: 'f_offers',
            ref: 'offers_q',
            type: 'dropdown',
            title: 'Offers',
            properties: { choices: [{ id: 'd_yes', ref: 'offers_yes', label: 'Send offers' }, { id: 'd_no', ref: 'offers_no', label: 'No offers' }] },
          },
        ],
      },
    },
  ],
};

const definition = parseTypeformDefinition(typeformForm);

const valid: FormMappingInput = {
  email: 'email_q',
  external_id: 'crm_id',
  purposes: {
    newsletter: { field: 'newsletter_q' },
    analytics: { field: 'analytics_q', choice: 'analytics_yes' },
    fraud: { field: 'fraud_q' },
  },
};

const withPurpose = (key: string, entry: unknown) => ({ ...valid, purposes: { ...valid.purposes, [key]: entry } });

describe('resolveFormMapping', () => {
  it('resolves a mapping of every decision purpose, the e-mail question and a hidden external id', () => {
    expect(resolveFormMapping(terms, definition, valid)).toEqual({
      email: { field: 'email_q', field_id: 'f_email' },
      external_id: 'crm_id',
      purposes: {
        newsletter: { field: 'newsletter_q', field_id: 'f_news', field_type: 'yes_no', basis: 'consent' },
        analytics: {
          field: 'analytics_q',
          field_id: 'f_analytics',
          field_type: 'multiple_choice',
          basis: 'consent',
          choice: { id: 'c_yes', ref: 'analytics_yes', label: 'Yes, measure my visits' },
        },
        // A right-to-object purpose may sit on a required question: answering is still a free choice.
        fraud: { field: 'fraud_q', field_id: 'f_fraud', field_type: 'yes_no', basis: 'legitimate_interest' },
      },
    });
  });

  it('accepts an optional legal question and a dropdown inside a group', () => {
    const mapping = resolveFormMapping(terms, definition, {
      email: 'email_q',
      purposes: { newsletter: { field: 'legal_q' }, analytics: { field: 'offers_q', choice: 'offers_yes' }, fraud: { field: 'fraud_q' } },
    });
    expect(mapping.external_id).toBeUndefined();
    expect(mapping.purposes.analytics).toMatchObject({ field_type: 'dropdown', choice: { ref: 'offers_yes' } });
  });

  it('refuses a consent purpose mapped to a required question, by name', () => {
    const error = refusal(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { field: 'terms_q' })));
    expect(error.details).toEqual([{ field: 'mapping.purposes.newsletter', reason: expect.stringMatching(/required question terms_q: consent cannot be a condition/) }]);
  });

  it.each([
    ['rating_q', /rating question: a score or a number is not a decision/],
    ['number_q', /number question: a score or a number is not a decision/],
    ['scale_q', /opinion_scale question: a score or a number is not a decision/],
    ['name_q', /short_text question: free text is not a decision/],
    ['bio_q', /long_text question: free text is not a decision/],
    ['date_q', /date question, which cannot carry a decision/],
    ['email_q', /email question, which cannot carry a decision/],
  ])('refuses a purpose mapped to %s, which cannot carry a decision', (ref, reason) => {
    const error = refusal(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { field: ref })));
    expect(error.details).toEqual([{ field: 'mapping.purposes.newsletter', reason: expect.stringMatching(reason) }]);
  });

  it('refuses a choice question without the yes-choice reference, or with one that is not its choice', () => {
    expect(refusal(() => resolveFormMapping(terms, definition, withPurpose('analytics', { field: 'analytics_q' }))).details).toEqual([
      { field: 'mapping.purposes.analytics.choice', reason: expect.stringMatching(/missing: name the ref of the choice of analytics_q that means yes \(its choices: analytics_yes, analytics_no\)/) },
    ]);
    expect(refusal(() => resolveFormMapping(terms, definition, withPurpose('analytics', { field: 'analytics_q', choice: 'offers_yes' }))).details).toEqual([
      { field: 'mapping.purposes.analytics.choice', reason: expect.stringMatching(/offers_yes is not a choice of analytics_q/) },
    ]);
    expect(refusedFields(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { field: 'newsletter_q', choice: 'x' })))).toEqual([
      'mapping.purposes.newsletter.choice',
    ]);
  });

  it('refuses unknown purposes, notice-only purposes and decision purposes left unmapped', () => {
    const { fraud: _fraud, ...withoutFraud } = valid.purposes;
    const error = refusal(() =>
      resolveFormMapping(terms, definition, {
        ...valid,
        purposes: { ...withoutFraud, lottery: { field: 'legal_q' }, billing: { field: 'terms_q' } },
      }),
    );
    expect(error.details).toEqual([
      { field: 'mapping.purposes.lottery', reason: 'is not a purpose of this flow' },
      { field: 'mapping.purposes.billing', reason: expect.stringMatching(/contract purpose: notice-only/) },
      { field: 'mapping.purposes.fraud', reason: expect.stringMatching(/is not mapped/) },
    ]);
  });

  it('refuses an e-mail that is not an email question, an unknown hidden field and unknown questions', () => {
    expect(
      refusedFields(() =>
        resolveFormMapping(terms, definition, {
          email: 'name_q',
          external_id: 'user_id',
          purposes: { ...valid.purposes, newsletter: { field: 'nope_q' } },
        }),
      ),
    ).toEqual(['mapping.email', 'mapping.external_id', 'mapping.purposes.newsletter.field']);
    expect(refusal(() => resolveFormMapping(terms, definition, { ...valid, email: 'name_q' })).details![0].reason).toBe(
      'must be an email question; name_q is a short_text question',
    );
    expect(refusedFields(() => resolveFormMapping(terms, definition, { ...valid, email: undefined }))).toEqual(['mapping.email']);
  });

  it('refuses one answer deciding two purposes', () => {
    const shared = { ...valid, purposes: { ...valid.purposes, newsletter: { field: 'legal_q' }, fraud: { field: 'legal_q' } } };
    expect(refusal(() => resolveFormMapping(terms, definition, shared)).details).toEqual([
      { field: 'mapping.purposes.fraud', reason: 'question legal_q already decides newsletter: one answer cannot decide two purposes' },
    ]);
    // Two choices of a question that takes one: answering one purpose's yes-choice would be the other's no.
    expect(refusal(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { field: 'analytics_q', choice: 'analytics_no' }))).details).toEqual([
      { field: 'mapping.purposes.analytics', reason: expect.stringMatching(/^question analytics_q already decides newsletter: it takes one choice/) },
    ]);
    // Two choices of a question that takes several may decide two purposes; one choice of it may not.
    const twoChoices = resolveFormMapping(terms, definition, {
      ...valid,
      purposes: { ...valid.purposes, newsletter: { field: 'topics_q', choice: 'topic_news' }, analytics: { field: 'topics_q', choice: 'topic_measure' } },
    });
    expect([twoChoices.purposes.newsletter.choice?.ref, twoChoices.purposes.analytics.choice?.ref]).toEqual(['topic_news', 'topic_measure']);
    expect(
      refusal(() =>
        resolveFormMapping(terms, definition, {
          ...valid,
          purposes: { ...valid.purposes, newsletter: { field: 'topics_q', choice: 'topic_news' }, analytics: { field: 'topics_q', choice: 'topic_news' } },
        }),
      ).details,
    ).toEqual([{ field: 'mapping.purposes.analytics', reason: 'choice topic_news of question topics_q already decides newsletter: one answer cannot decide two purposes' }]);
  });

  it('refuses malformed mappings by name', () => {
    expect(refusedFields(() => resolveFormMapping(terms, definition, null))).toEqual(['mapping']);
    expect(refusedFields(() => resolveFormMapping(terms, definition, { email: 'email_q', purposes: [] }))).toEqual(['mapping.purposes']);
    expect(refusedFields(() => resolveFormMapping(terms, definition, withPurpose('newsletter', 'newsletter_q')))).toEqual(['mapping.purposes.newsletter']);
    expect(refusedFields(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { field: 'newsletter_q', choice: 7 })))).toEqual([
      'mapping.purposes.newsletter.choice',
    ]);
  });

  it('refuses a field of a purpose mapping other than field and choice by name, instead of dropping it', () => {
    // A misspelt `choice` on a yes/no question was accepted and dropped: the caller believed it saved.
    const mapping = {
      ...valid,
      purposes: { ...valid.purposes, newsletter: { field: 'newsletter_q', chioce: 'yes' }, analytics: { field: 'analytics_q', choice: 'analytics_yes', label: 'Yes' } },
    };
    const refused = refusal(() => resolveFormMapping(terms, definition, mapping));
    expect(refused.details).toEqual([
      { field: 'mapping.purposes.newsletter.chioce', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.analytics.label', reason: 'is not a field of a purpose mapping (field, choice)' },
    ]);
  });

  it("names every refusal of a purpose's mapping in one answer: a misspelt field does not hide the purpose's other problems", () => {
    // A misspelt `choice` beside a choice question: the unknown field, and the yes-choice it leaves missing.
    expect(refusal(() => resolveFormMapping(terms, definition, withPurpose('analytics', { field: 'analytics_q', chioce: 'analytics_yes' }))).details).toEqual([
      { field: 'mapping.purposes.analytics.chioce', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.analytics.choice', reason: expect.stringMatching(/missing: name the ref of the choice of analytics_q that means yes/) },
    ]);
    // A misspelt `field`: the unknown field, and the question left unnamed.
    expect(refusal(() => resolveFormMapping(terms, definition, withPurpose('newsletter', { feild: 'newsletter_q' }))).details).toEqual([
      { field: 'mapping.purposes.newsletter.feild', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.newsletter', reason: 'must be {field: <question ref>, choice?: <choice ref>}' },
    ]);
    // An unknown field beside a question the form lacks, a required question, a question that carries no decision,
    // a choice on a question without choices, and a question another purpose already decides.
    const mapping = {
      ...valid,
      purposes: {
        newsletter: { field: 'nope_q', label: 'x' },
        analytics: { field: 'terms_q', label: 'x', choice: 'yes' },
        fraud: { field: 'rating_q', note: 'x' },
        lottery: { field: 'legal_q', extra: 1 },
      },
    };
    expect(refusal(() => resolveFormMapping(terms, definition, mapping)).details).toEqual([
      { field: 'mapping.purposes.newsletter.label', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.newsletter.field', reason: 'the form has no question with ref nope_q' },
      { field: 'mapping.purposes.analytics.label', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.analytics', reason: expect.stringMatching(/required question terms_q: consent cannot be a condition/) },
      { field: 'mapping.purposes.analytics.choice', reason: 'terms_q is a legal question: it has no choices' },
      { field: 'mapping.purposes.fraud.note', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.fraud', reason: expect.stringMatching(/rating question: a score or a number is not a decision/) },
      { field: 'mapping.purposes.lottery', reason: 'is not a purpose of this flow' },
    ]);
    const shared = { ...valid, purposes: { ...valid.purposes, newsletter: { field: 'legal_q', label: 'x' }, fraud: { field: 'legal_q', note: 'x' } } };
    expect(refusal(() => resolveFormMapping(terms, definition, shared)).details).toEqual([
      { field: 'mapping.purposes.newsletter.label', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.fraud.note', reason: 'is not a field of a purpose mapping (field, choice)' },
      { field: 'mapping.purposes.fraud', reason: 'question legal_q already decides newsletter: one answer cannot decide two purposes' },
    ]);
  });
});

// ---- properties ------------------------------------------------------------------------------

type Basis = 'consent' | 'legitimate_interest' | 'contract';
const DECISION_TYPES = ['yes_no', 'legal', ...CHOICE_DECISION_FIELD_TYPES] as const;
const OTHER_TYPES = ['rating', 'number', 'opinion_scale', 'short_text', 'long_text', 'date', 'file_upload', 'statement'] as const;

interface Scenario {
  terms: FlowTerms;
  form: { hidden: string[]; fields: Record<string, unknown>[] };
  mapping: FormMappingInput;
}

/** A flow, a form with one optional question per decision purpose, and the mapping joining them. */
const scenarioArbitrary: fc.Arbitrary<Scenario> = fc
  .uniqueArray(
    fc.record({
      key: fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
      basis: fc.constantFrom<Basis>('consent', 'consent', 'legitimate_interest', 'contract'),
      type: fc.constantFrom(...DECISION_TYPES),
    }),
    { minLength: 1, maxLength: 6, selector: (purpose) => purpose.key },
  )
  .map((purposes) => {
    const terms = normaliseFlowTerms({
      name: 'Generated',
      pattern: 'standard',
      consent_duration: 'P1Y',
      purposes: purposes.map((p) => p.key),
      purpose_definitions: Object.fromEntries(purposes.map((p) => [p.key, { basis: p.basis, ...(p.basis === 'contract' ? { required: true } : {}) }])),
    });
    const decisive = purposes.filter((p) => p.basis !== 'contract');
    const fields: Record<string, unknown>[] = [{ id: 'e', ref: 'email_q', type: 'email' }];
    const mapping: FormMappingInput = { email: 'email_q', purposes: {} };
    for (const p of decisive) {
      const choice = (CHOICE_DECISION_FIELD_TYPES as readonly string[]).includes(p.type);
      fields.push({
        id: `id_${p.key}`,
        ref: `q_${p.key}`,
        type: p.type,
        validations: { required: false },
        ...(choice ? { properties: { choices: [{ id: `y_${p.key}`, ref: `yes_${p.key}`, label: 'Yes' }, { id: `n_${p.key}`, ref: `no_${p.key}`, label: 'No' }] } } : {}),
      });
      mapping.purposes[p.key] = { field: `q_${p.key}`, ...(choice ? { choice: `yes_${p.key}` } : {}) };
    }
    return { terms, form: { hidden: [], fields }, mapping };
  });

const consentKeys = (terms: FlowTerms) => terms.purposes.filter((p) => p.basis === 'consent').map((p) => p.key);

describe('resolveFormMapping for a delivery, against the flow version in force at its submission', () => {
  const IN_FORCE = /version 1 of the flow, in force at form_response\.submitted_at/;

  it('sets aside the mapped purposes the version lacks or takes no decision on, instead of refusing them as a save does', () => {
    // Version 1: analytics was notice-only, lottery was no purpose of it.
    const version1 = normaliseFlowTerms({
      name: 'Sign-up',
      pattern: 'standard',
      consent_duration: 'P1Y',
      purposes: ['newsletter', 'analytics', 'fraud'],
      purpose_definitions: { analytics: { basis: 'contract' }, fraud: { basis: 'legitimate_interest' } },
    });
    const mapping = { ...valid, purposes: { ...valid.purposes, lottery: { field: 'legal_q' } } };
    expect(refusedFields(() => resolveFormMapping(version1, definition, mapping))).toEqual(['mapping.purposes.analytics', 'mapping.purposes.lottery']);
    const resolved = resolveFormMapping(version1, definition, mapping, { version: 1 });
    expect(Object.keys(resolved.purposes)).toEqual(['newsletter', 'fraud']);
    expect(resolved.outside_version).toEqual({
      analytics: { field: 'analytics_q', field_id: 'f_analytics', reason: expect.stringMatching(/version 1 of the flow, in force at form_response\.submitted_at, takes no decision on analytics \(a contract purpose\)/) },
      lottery: { field: 'legal_q', field_id: 'f_legal_optional', reason: expect.stringMatching(/version 1 of the flow, in force at form_response\.submitted_at, has no purpose lottery/) },
    });
  });

  it("reads each question with the version's basis, and checks it with that basis", () => {
    // Version 1 asked for fraud checks as consent: a yes is a consent, and a required question cannot carry it.
    const version1 = normaliseFlowTerms({ name: 'Sign-up', pattern: 'standard', consent_duration: 'P1Y', purposes: ['newsletter', 'analytics', 'fraud'] });
    expect(refusal(() => resolveFormMapping(version1, definition, valid, { version: 1 })).details).toEqual([
      { field: 'mapping.purposes.fraud', reason: expect.stringMatching(/required question fraud_q: consent cannot be a condition/) },
    ]);
    const optionalFraud = parseTypeformDefinition({ ...typeformForm, fields: typeformForm.fields.map((field) => (field.ref === 'fraud_q' ? { ...field, validations: { required: false } } : field)) });
    expect(resolveFormMapping(version1, optionalFraud, valid, { version: 1 }).purposes.fraud).toEqual({ field: 'fraud_q', field_id: 'f_fraud', field_type: 'yes_no', basis: 'consent' });
    expect(resolveFormMapping(terms, optionalFraud, valid, { version: 2 }).purposes.fraud.basis).toBe('legitimate_interest');
  });

  it('refuses a purpose the version decides and the mapping has no question for, naming the version', () => {
    const version1 = normaliseFlowTerms({
      name: 'Sign-up',
      pattern: 'standard',
      consent_duration: 'P1Y',
      purposes: ['newsletter', 'analytics', 'fraud', 'partners'],
      purpose_definitions: { fraud: { basis: 'legitimate_interest' } },
    });
    expect(refusal(() => resolveFormMapping(version1, definition, valid, { version: 1 })).details).toEqual([
      { field: 'mapping.purposes.partners', reason: expect.stringMatching(IN_FORCE) },
    ]);
  });
});

describe('resolveFormMapping properties', () => {
  it('accepts every mapping of each decision purpose to an optional decision question', () => {
    fc.assert(
      fc.property(scenarioArbitrary, ({ terms, form, mapping }) => {
        const resolved = resolveFormMapping(terms, parseTypeformDefinition(form), mapping);
        expect(Object.keys(resolved.purposes).sort()).toEqual(terms.purposes.filter((p) => p.takes_decision).map((p) => p.key).sort());
      }),
    );
  });

  it('refuses exactly the consent purposes whose question is required', () => {
    fc.assert(
      fc.property(scenarioArbitrary, fc.infiniteStream(fc.boolean()), ({ terms, form, mapping }, coins) => {
        const required = new Set<string>();
        const fields = form.fields.map((field) => {
          const key = String(field.ref).slice(2);
          if (field.type === 'email' || !coins.next().value) return field;
          if (consentKeys(terms).includes(key)) required.add(key);
          return { ...field, validations: { required: true } };
        });
        const run = () => resolveFormMapping(terms, parseTypeformDefinition({ ...form, fields }), mapping);
        if (required.size === 0) return void run();
        expect(refusedFields(run).sort()).toEqual([...required].map((key) => `mapping.purposes.${key}`).sort());
      }),
    );
  });

  it('refuses every purpose moved to a question that cannot carry a decision, naming it', () => {
    fc.assert(
      fc.property(scenarioArbitrary, fc.constantFrom(...OTHER_TYPES), fc.nat(), ({ terms, form, mapping }, type, pick) => {
        const keys = Object.keys(mapping.purposes);
        fc.pre(keys.length > 0);
        const key = keys[pick % keys.length];
        const fields = [...form.fields, { id: 'other', ref: 'other_q', type }];
        const moved = { ...mapping, purposes: { ...mapping.purposes, [key]: { field: 'other_q' } } };
        expect(refusedFields(() => resolveFormMapping(terms, parseTypeformDefinition({ ...form, fields }), moved))).toEqual([`mapping.purposes.${key}`]);
      }),
    );
  });
});
