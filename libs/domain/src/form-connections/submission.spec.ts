import fc from 'fast-check';
import { recordAttestation } from '../captures/attestation';
import { DomainError } from '../errors';
import { normaliseFlowTerms } from '../flows';
import { ResolvedFormMapping } from './mapping';
import { isTypeformTestRequest, parseTypeformSubmission, submissionRecord, TYPEFORM_TEST_EMAIL, TypeformSubmission } from './submission';

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

const terms = normaliseFlowTerms({
  name: 'Sign-up',
  pattern: 'standard',
  consent_duration: 'P1Y',
  purposes: ['newsletter', 'analytics', 'offers', 'fraud', 'billing'],
  purpose_definitions: { fraud: { basis: 'legitimate_interest' }, billing: { basis: 'contract', required: true } },
});

const mapping: ResolvedFormMapping = {
  email: { field: 'email_q', field_id: 'f_email' },
  external_id: 'crm_id',
  purposes: {
    newsletter: { field: 'newsletter_q', field_id: 'f_news', field_type: 'yes_no', basis: 'consent' },
    analytics: { field: 'analytics_q', field_id: 'f_analytics', field_type: 'multiple_choice', basis: 'consent', choice: { id: 'c_yes', ref: 'analytics_yes', label: 'Yes' } },
    offers: { field: 'offers_q', field_id: 'f_offers', field_type: 'dropdown', basis: 'consent', choice: { id: 'd_yes', ref: 'offers_yes', label: 'Send offers' } },
    fraud: { field: 'fraud_q', field_id: 'f_fraud', field_type: 'yes_no', basis: 'legitimate_interest' },
  },
};

/** A delivery shaped like Typeform's documented example payload. */
function delivery(answers: unknown[], extra: Record<string, unknown> = {}) {
  return {
    event_id: 'LtWXD3crgy',
    event_type: 'form_response',
    form_response: {
      form_id: 'lT4Z3j',
      token: 'a3a12ec67a1365927098a606107fac15',
      landed_at: '2026-11-20T10:00:00Z',
      submitted_at: '2026-11-20T10:02:00Z',
      hidden: { crm_id: 'crm-4711' },
      definition: { id: 'lT4Z3j', title: 'Sign up', fields: [] },
      answers,
      ...extra,
    },
  };
}

const email = (value: string) => ({ type: 'email', email: value, field: { id: 'f_email', type: 'email', ref: 'email_q' } });
const yesNo = (ref: string, id: string, value: boolean) => ({ type: 'boolean', boolean: value, field: { id, type: 'yes_no', ref } });

describe('parseTypeformSubmission', () => {
  it('reads the documented payload', () => {
    const submission = parseTypeformSubmission(delivery([email('ada@example.org')]));
    expect(submission).toMatchObject({
      event_id: 'LtWXD3crgy',
      event_type: 'form_response',
      form_id: 'lT4Z3j',
      token: 'a3a12ec67a1365927098a606107fac15',
      submitted_at: '2026-11-20T10:02:00.000Z',
      hidden: { crm_id: 'crm-4711' },
    });
    expect(submission.answers[0].field).toEqual({ id: 'f_email', ref: 'email_q', type: 'email' });
  });

  it('names what is missing or malformed', () => {
    const error = refusal(() =>
      parseTypeformSubmission({ event_type: 'form_response', form_response: { form_id: 'x', token: 'a b', submitted_at: 'yesterday', answers: [{ text: 'x' }] } }),
    );
    expect(error.details!.map((issue) => issue.field)).toEqual(['event_id', 'form_response.token', 'form_response.submitted_at', 'form_response.answers[0]']);
    expect(refusal(() => parseTypeformSubmission({ event_id: 'e', event_type: 'form_response' })).details!.map((i) => i.field)).toEqual(['form_response']);
    expect(refusal(() => parseTypeformSubmission([])).details![0].field).toBe('body');
  });

  it('refuses a second answer to the same question (by ref, or by id) by name, instead of reading one of them', () => {
    const byRef = refusal(() => parseTypeformSubmission(delivery([email('ada@example.com'), yesNo('newsletter_q', 'f_news', false), yesNo('newsletter_q', 'f_other', true)])));
    expect(byRef.details).toEqual([{ field: 'form_response.answers[2]', reason: 'answers the same question as form_response.answers[1]: a response answers each question once' }]);
    const byId = refusal(() => parseTypeformSubmission(delivery([yesNo('newsletter_q', 'f_news', true), email('ada@example.com'), email('bob@example.com'), yesNo('renamed', 'f_news', false)])));
    expect(byId.details!.map((issue) => issue.field)).toEqual(['form_response.answers[2]', 'form_response.answers[3]']);
    // Different questions, each answered once, are read.
    expect(parseTypeformSubmission(delivery([email('ada@example.com'), yesNo('newsletter_q', 'f_news', true), yesNo('fraud_q', 'f_fraud', false)])).answers).toHaveLength(3);
  });

  it('refuses a submitted_at without its zone, or on a day the month does not have, instead of reading it in the server\'s zone', () => {
    // '2026-11-20T10:00:00' was read in the server's local time zone (another instant on a server in
    // Europe/Berlin than in UTC), and '2026-02-30T10:00:00Z' was recorded as 2 March.
    for (const submitted_at of ['2026-11-20T10:00:00', '2026-02-30T10:00:00Z', '2026-11-20']) {
      expect([submitted_at, refusal(() => parseTypeformSubmission(delivery([email('ada@example.org')], { submitted_at }))).details]).toEqual([
        submitted_at,
        [{ field: 'form_response.submitted_at', reason: 'must be an ISO 8601 date-time with its zone' }],
      ]);
    }
    // An offset is a zone: converted to UTC.
    expect(parseTypeformSubmission(delivery([email('ada@example.org')], { submitted_at: '2026-11-20T11:02:00+01:00' })).submitted_at).toBe('2026-11-20T10:02:00.000Z');
  });

  it('refuses a response nested far deeper than any Typeform payload, by its name', () => {
    const deep = JSON.parse(`{"variables":${'['.repeat(20000)}${']'.repeat(20000)}}`);
    expect(refusal(() => parseTypeformSubmission(delivery([email('ada@example.org')], deep))).details).toEqual([
      { field: 'form_response', reason: 'nests more than 64 levels deep: not a Typeform response' },
    ]);
  });
});

describe('submissionRecord', () => {
  it('grants a yes/no answered true, a choice whose mapped ref was chosen, and records an objection', () => {
    const submission = parseTypeformSubmission(
      delivery([
        email(' Ada@Example.org '),
        yesNo('newsletter_q', 'f_news', true),
        { type: 'choices', choices: { ids: ['c_no', 'c_yes'], labels: ['No', 'Yes'], refs: ['analytics_no', 'analytics_yes'] }, field: { id: 'f_analytics', type: 'multiple_choice', ref: 'analytics_q' } },
        { type: 'choice', choice: { id: 'd_no', label: 'No offers', ref: 'offers_no' }, field: { id: 'f_offers', type: 'dropdown', ref: 'offers_q' } },
        yesNo('fraud_q', 'f_fraud', true),
      ]),
    );
    const record = submissionRecord(mapping, submission);
    expect(record).toEqual({
      email: 'Ada@Example.org',
      external_id: 'crm-4711',
      captured_at: '2026-11-20T10:02:00.000Z',
      decisions: {
        newsletter: { decision: 'granted', default_checked: false, mandatory: false },
        analytics: { decision: 'granted', default_checked: false, mandatory: false },
        offers: { decision: 'declined', default_checked: false, mandatory: false },
        fraud: { decision: 'declined', default_checked: false, mandatory: false },
      },
      // Every question was answered: each was shown.
      presentation_stated: ['newsletter', 'analytics', 'offers', 'fraud'],
    });
    // Through the capture rules: the objection is recorded as such, the contract purpose as noticed.
    expect(recordAttestation(terms, record.decisions)).toMatchObject({
      newsletter: { status: 'granted' },
      offers: { status: 'declined' },
      fraud: { status: 'objected' },
      billing: { status: 'noticed' },
    });
  });

  it('reads an unanswered optional consent question as a decline and an unanswered objection as none', () => {
    const record = submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.org')], { hidden: {} })));
    expect(record.external_id).toBeUndefined();
    expect(Object.values(record.decisions).map((d) => d.decision)).toEqual(['declined', 'declined', 'declined', 'granted']);
    // No question answered, none surely shown (a form's logic may have skipped them): no presentation is attested.
    expect(record.presentation_stated).toEqual([]);
  });

  it('matches choices by id when a payload carries no refs, and an older dropdown answer by its label', () => {
    const record = submissionRecord(
      mapping,
      parseTypeformSubmission(
        delivery([
          email('ada@example.org'),
          { type: 'choice', choice: { id: 'c_yes', label: 'Yes' }, field: { id: 'f_analytics', type: 'multiple_choice' } },
          { type: 'text', text: 'Send offers', field: { id: 'f_offers', type: 'dropdown', ref: 'offers_q' } },
        ]),
      ),
    );
    expect(record.decisions.analytics.decision).toBe('granted');
    expect(record.decisions.offers.decision).toBe('granted');
  });

  it("never reads what the respondent typed into a choice question's Other as the mapped choice", () => {
    const answers = (analytics: Record<string, unknown>, analyticsType = 'choice') =>
      submissionRecord(
        mapping,
        parseTypeformSubmission(
          delivery([email('ada@example.org'), { type: analyticsType, [analyticsType]: analytics, field: { id: 'f_analytics', type: 'multiple_choice' } }]),
        ),
      ).decisions.analytics.decision;
    // "Yes" typed as Other is not the choice labelled Yes: no consent is read from it.
    expect(answers({ label: 'Yes', other: 'Yes' })).toBe('declined');
    expect(answers({ other: 'Yes' })).toBe('declined');
    expect(answers({ labels: ['Yes'], other: 'Yes' }, 'choices')).toBe('declined');
    // The choice itself, with Other typed beside it, is still read.
    expect(answers({ labels: ['Yes', 'Maybe'], other: 'Maybe' }, 'choices')).toBe('granted');
    expect(answers({ id: 'c_yes', label: 'Yes', other: 'Yes' })).toBe('granted');
  });

  it('refuses by purpose an answer that no longer fits the mapped question, and a missing e-mail', () => {
    const error = refusal(() =>
      submissionRecord(
        mapping,
        parseTypeformSubmission(delivery([{ type: 'text', text: 'yes', field: { id: 'f_news', type: 'short_text', ref: 'newsletter_q' } }, yesNo('analytics_q', 'f_analytics', true)])),
      ),
    );
    expect(error.details!.map((issue) => issue.field)).toEqual(['email', 'decisions.newsletter', 'decisions.analytics']);
    // A yes/no answer carrying no boolean is named as such, not as a changed form.
    const malformed = refusal(() =>
      submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.com'), { type: 'boolean', boolean: 'true', field: { id: 'f_news', type: 'yes_no', ref: 'newsletter_q' } }]))),
    );
    expect(malformed.details).toContainEqual({ field: 'decisions.newsletter', reason: 'the answer to newsletter_q is a yes/no answer without a boolean value (true or false)' });
  });

  it('refuses a control character (NUL, which cannot be stored) in the e-mail answer or the hidden id, naming each', () => {
    const error = refusal(() => submissionRecord(mapping, parseTypeformSubmission(delivery([email('a\u0000da@example.org')], { hidden: { crm_id: 'crm\u0000-4711' } }))));
    expect(error.details).toEqual([
      { field: 'email', reason: 'the answer to email_q is not an e-mail address' },
      { field: 'external_id', reason: 'the hidden field crm_id must not contain control characters' },
    ]);
  });
});

describe('submissionRecord against the flow version in force at the submission', () => {
  // ads is mapped (for the active version) but was no purpose of the version in force at the submission.
  const lateMapping: ResolvedFormMapping = {
    ...mapping,
    outside_version: { ads: { field: 'ads_q', field_id: 'f_ads', reason: 'version 1 of the flow, in force at form_response.submitted_at, has no purpose ads' } },
  };

  it("records the version's purposes when the question of a purpose outside it was not answered", () => {
    const record = submissionRecord(lateMapping, parseTypeformSubmission(delivery([email('ada@example.org'), yesNo('newsletter_q', 'f_news', true)])));
    expect(Object.keys(record.decisions)).toEqual(['newsletter', 'analytics', 'offers', 'fraud']);
    expect(record.decisions.newsletter.decision).toBe('granted');
  });

  it('refuses by name an answer to the question of a purpose outside the version, matched by ref or by id', () => {
    for (const field of [{ id: 'f_ads', type: 'yes_no', ref: 'ads_q' }, { id: 'f_ads', type: 'yes_no', ref: null }]) {
      const answered = parseTypeformSubmission(delivery([email('ada@example.org'), { type: 'boolean', boolean: false, field }]));
      expect(refusal(() => submissionRecord(lateMapping, answered)).details).toEqual([
        { field: 'decisions.ads', reason: 'the answer to ads_q cannot be recorded: version 1 of the flow, in force at form_response.submitted_at, has no purpose ads' },
      ]);
    }
  });
});

describe('submissionRecord: the person as the Record API takes them', () => {
  it('names the e-mail limit an answer is over, in the words of every entry point', () => {
    const local = refusal(() => submissionRecord(mapping, parseTypeformSubmission(delivery([email(`${'a'.repeat(65)}@example.org`)]))));
    expect(local.details).toEqual([{ field: 'email', reason: 'the answer to email_q must have at most 64 bytes before the @ (an e-mail address limit)' }]);
    const long = refusal(() => submissionRecord(mapping, parseTypeformSubmission(delivery([email(`ada@${'d'.repeat(247)}.org`)]))));
    expect(long.details).toEqual([{ field: 'email', reason: 'the answer to email_q must be at most 254 characters (an e-mail address limit)' }]);
  });

  it('refuses an unpaired surrogate in the hidden id or the e-mail answer (not text: it cannot be kept as given), naming each', () => {
    const error = refusal(() => submissionRecord(mapping, parseTypeformSubmission(delivery([email('a\ud800da@example.org')], { hidden: { crm_id: 'crm-\udc00' } }))));
    expect(error.details).toEqual([
      { field: 'email', reason: 'the answer to email_q is not an e-mail address' },
      { field: 'external_id', reason: 'the hidden field crm_id must be Unicode text (it holds an unpaired surrogate)' },
    ]);
  });

  it('counts the hidden id in characters and without the spaces around it, as the Record API does', () => {
    const emoji = '😀'.repeat(150);
    expect(submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.org')], { hidden: { crm_id: emoji } }))).external_id).toBe(emoji);
    expect(submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.org')], { hidden: { crm_id: `  ${'x'.repeat(200)} ` } }))).external_id).toBe('x'.repeat(200));
    const error = refusal(() => submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.org')], { hidden: { crm_id: '😀'.repeat(201) } }))));
    expect(error.details).toEqual([{ field: 'external_id', reason: 'the hidden field crm_id must be at most 200 characters (without the spaces around it)' }]);
  });

  it('takes a hidden id sent as a whole number as its digits, and refuses one that is no text (it was dropped without a word)', () => {
    const record = (crm_id: unknown) => submissionRecord(mapping, parseTypeformSubmission(delivery([email('ada@example.org')], { hidden: { crm_id } })));
    expect(record(12345).external_id).toBe('12345');
    expect(refusal(() => record(true)).details).toEqual([{ field: 'external_id', reason: 'the hidden field crm_id must be text, not a boolean' }]);
    expect(refusal(() => record({ id: 1 })).details).toEqual([{ field: 'external_id', reason: 'the hidden field crm_id must be text, not an object' }]);
    expect(refusal(() => record(1.5)).details).toEqual([{ field: 'external_id', reason: 'the hidden field crm_id must be text, not a number' }]);
    expect(record(null).external_id).toBeUndefined();
  });
});

describe('isTypeformTestRequest', () => {
  it('is the placeholder address of the test request on the mapped e-mail question, nothing else', () => {
    expect(isTypeformTestRequest(mapping.email, parseTypeformSubmission(delivery([email(TYPEFORM_TEST_EMAIL)])))).toBe(true);
    expect(isTypeformTestRequest(mapping.email, parseTypeformSubmission(delivery([email('AN_ACCOUNT@example.com')])))).toBe(true);
    expect(isTypeformTestRequest(mapping.email, parseTypeformSubmission(delivery([email('ada@example.com')])))).toBe(false);
    const elsewhere = { type: 'email', email: TYPEFORM_TEST_EMAIL, field: { id: 'f_other', type: 'email', ref: 'other_q' } };
    expect(isTypeformTestRequest(mapping.email, parseTypeformSubmission(delivery([email('ada@example.com'), elsewhere])))).toBe(false);
  });
});

// ---- properties ------------------------------------------------------------------------------

type Answer = boolean | undefined;

describe('submissionRecord properties', () => {
  const yesNoMapping: ResolvedFormMapping = {
    email: mapping.email,
    purposes: {
      newsletter: mapping.purposes.newsletter,
      analytics: { field: 'analytics_q', field_id: 'f_analytics', field_type: 'legal', basis: 'consent' },
      fraud: mapping.purposes.fraud,
    },
  };

  it('consent is granted exactly when its question was answered yes; an objection exactly when the objection was', () => {
    const answer = fc.constantFrom<Answer>(true, false, undefined);
    fc.assert(
      fc.property(answer, answer, answer, (newsletter, analytics, fraud) => {
        const answers: unknown[] = [email('ada@example.org')];
        if (newsletter !== undefined) answers.push(yesNo('newsletter_q', 'f_news', newsletter));
        if (analytics !== undefined) answers.push({ type: 'boolean', boolean: analytics, field: { id: 'f_analytics', type: 'legal', ref: 'analytics_q' } });
        if (fraud !== undefined) answers.push(yesNo('fraud_q', 'f_fraud', fraud));
        const { decisions } = submissionRecord(yesNoMapping, parseTypeformSubmission(delivery(answers)));
        expect(decisions.newsletter.decision).toBe(newsletter === true ? 'granted' : 'declined');
        expect(decisions.analytics.decision).toBe(analytics === true ? 'granted' : 'declined');
        expect(decisions.fraud.decision).toBe(fraud === true ? 'declined' : 'granted');
      }),
    );
  });

  it('a choice purpose is granted exactly when its choice ref is among those chosen', () => {
    const refs = ['analytics_yes', 'analytics_no', 'analytics_maybe', 'other'];
    fc.assert(
      fc.property(fc.subarray(refs), (chosen) => {
        const submission: TypeformSubmission = parseTypeformSubmission(
          delivery([email('ada@example.org'), { type: 'choices', choices: { refs: chosen, labels: chosen }, field: { id: 'f_analytics', type: 'multiple_choice', ref: 'analytics_q' } }]),
        );
        expect(submissionRecord(mapping, submission).decisions.analytics.decision).toBe(chosen.includes('analytics_yes') ? 'granted' : 'declined');
      }),
    );
  });
});
