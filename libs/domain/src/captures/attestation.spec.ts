import fc from 'fast-check';
import { DomainError } from '../errors';
import { FlowTerms, normaliseFlowTerms } from '../flows';
import { assertCapturable, AttestedDecisions, decisionShapeIssues, PresentationRule, recordAttestation, statedPresentations } from './attestation';

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

/** marketing (explicit consent), research (informed consent), fraud (legitimate interest), tos (contract). */
const terms = normaliseFlowTerms({
  name: 'Sign-up',
  pattern: 'standard',
  consent_duration: 'P1Y',
  purposes: ['marketing', 'research', 'fraud', 'tos'],
  purpose_definitions: {
    research: { mechanism: 'informed' },
    fraud: { basis: 'legitimate_interest' },
    tos: { basis: 'contract', required: true },
  },
});

const valid: AttestedDecisions = {
  marketing: { decision: 'granted', default_checked: false, mandatory: false },
  research: { decision: 'declined', default_checked: false, mandatory: false },
  fraud: { decision: 'granted', default_checked: true, mandatory: false },
};

describe('recordAttestation', () => {
  it('records every purpose of the flow in flow order', () => {
    const recorded = recordAttestation(terms, valid);
    expect(Object.keys(recorded)).toEqual(['marketing', 'research', 'fraud', 'tos']);
    expect(recorded).toEqual({
      marketing: { status: 'granted', basis: 'consent' },
      research: { status: 'declined', basis: 'consent' },
      fraud: { status: 'noticed', basis: 'legitimate_interest' },
      tos: { status: 'noticed', basis: 'contract' },
    });
  });

  it('records an unticked right-to-object purpose as an objection, and a missing one as noticed', () => {
    expect(recordAttestation(terms, { ...valid, fraud: { decision: 'declined', default_checked: true, mandatory: false } }).fraud).toEqual({ status: 'objected', basis: 'legitimate_interest' });
    const { fraud: _fraud, ...withoutFraud } = valid;
    expect(recordAttestation(terms, withoutFraud).fraud).toEqual({ status: 'noticed', basis: 'legitimate_interest' });
  });

  it('refuses a decision that does not state its presentation, naming the purpose and the flag', () => {
    const error = refusal(() => recordAttestation(terms, { marketing: { decision: 'granted' }, research: { decision: 'declined', mandatory: false }, fraud: { decision: 'declined', default_checked: true } }));
    expect(error.details).toEqual([
      { field: 'decisions.marketing', reason: expect.stringMatching(/^default_checked is missing/) },
      { field: 'decisions.marketing', reason: expect.stringMatching(/^mandatory is missing/) },
      { field: 'decisions.research', reason: expect.stringMatching(/^default_checked is missing/) },
      { field: 'decisions.fraud', reason: expect.stringMatching(/^mandatory is missing/) },
    ]);
  });

  it('reads absent presentation flags as false where they may be left out (import rows carry only the decision)', () => {
    const recorded = recordAttestation(terms, { marketing: { decision: 'granted' }, research: { decision: 'declined' }, fraud: { decision: 'declined' } }, 'optional');
    expect([recorded.marketing.status, recorded.fraud.status]).toEqual(['granted', 'objected']);
  });

  it('refuses a default-ticked or mandatory consent purpose, whatever the decision', () => {
    const error = refusal(() =>
      recordAttestation(terms, {
        ...valid,
        marketing: { decision: 'granted', default_checked: true, mandatory: false },
        research: { decision: 'declined', default_checked: false, mandatory: true },
      }),
    );
    expect(error.details).toEqual([
      { field: 'decisions.marketing', reason: expect.stringMatching(/ticked by default/) },
      { field: 'decisions.research', reason: expect.stringMatching(/mandatory/) },
    ]);
  });

  it('refuses a missing consent purpose: silence is not a decline', () => {
    expect(refusal(() => recordAttestation(terms, { marketing: valid.marketing })).details).toEqual([
      { field: 'decisions.research', reason: expect.stringMatching(/missing.*declined/) },
    ]);
  });

  it('refuses unknown purposes, decisions on notice-only purposes and a mandatory right-to-object purpose', () => {
    expect(
      refusedFields(() =>
        recordAttestation(terms, {
          ...valid,
          fraud: { decision: 'granted', default_checked: false, mandatory: true },
          tos: { decision: 'granted' },
          newsletter: { decision: 'granted' },
        }),
      ),
    ).toEqual(['decisions.fraud', 'decisions.tos', 'decisions.newsletter']);
  });

  it('refuses malformed entries and values', () => {
    const error = refusal(() =>
      recordAttestation(terms, {
        marketing: { decision: 'yes' },
        research: 'granted',
        fraud: { decision: 'granted', default_checked: 'no' },
      } as unknown as AttestedDecisions, 'optional'),
    );
    expect(error.details).toEqual([
      { field: 'decisions.marketing', reason: 'decision must be granted or declined' },
      { field: 'decisions.research', reason: 'must be an object {decision, default_checked, mandatory}' },
      { field: 'decisions.fraud', reason: 'default_checked must be a boolean' },
    ]);
    expect(refusedFields(() => recordAttestation(terms, null as unknown as AttestedDecisions))).toEqual(['decisions']);
    expect(refusedFields(() => recordAttestation(terms, [] as unknown as AttestedDecisions))).toEqual(['decisions']);
  });

  it('refuses a field a decision does not have, by name, rather than dropping it', () => {
    const error = refusal(() =>
      recordAttestation(terms, { ...valid, marketing: { decision: 'granted', label: 'Send me news' }, fraud: { decision: 'granted', shown: true } } as unknown as AttestedDecisions, 'optional'),
    );
    expect(error.details).toEqual([
      { field: 'decisions.marketing', reason: 'label is not a field of a decision (decision, default_checked, mandatory)' },
      { field: 'decisions.fraud', reason: 'shown is not a field of a decision (decision, default_checked, mandatory)' },
    ]);
  });

  it('names every problem of one purpose', () => {
    const error = refusal(() => recordAttestation(terms, { ...valid, marketing: { decision: 'granted', default_checked: true, mandatory: true } }));
    expect(error.details!.map((issue) => issue.field)).toEqual(['decisions.marketing', 'decisions.marketing']);
  });
});

describe('statedPresentations', () => {
  it('names the decisions that state both flags as booleans, nothing else', () => {
    expect(statedPresentations({ ...valid, research: { decision: 'declined', default_checked: false }, odd: { decision: 'granted', default_checked: 'no', mandatory: false } } as unknown as AttestedDecisions)).toEqual(['marketing', 'fraud']);
    expect(statedPresentations(null as unknown as AttestedDecisions)).toEqual([]);
  });
});

describe('assertCapturable', () => {
  it('passes a decision-only flow with a consent duration', () => {
    expect(() => assertCapturable(terms)).not.toThrow();
  });

  it('refuses on flow_id with every reason', () => {
    const flow = normaliseFlowTerms({ name: 'KYC', pattern: 'standard', purposes: ['marketing'], data_fields: ['email'] });
    const error = refusal(() => assertCapturable(flow));
    expect(error.details).toHaveLength(2);
    expect(error.details!.every((issue) => issue.field === 'flow_id')).toBe(true);
    expect(error.details![0].reason).toBe('the flow declares no consent_duration');
  });
});

// ---- properties ------------------------------------------------------------------------------

type Basis = 'consent' | 'legitimate_interest' | 'contract' | 'legal_obligation';
const NOTICE_ONLY: readonly string[] = ['contract', 'legal_obligation'];

const flowArbitrary: fc.Arbitrary<FlowTerms> = fc
  .uniqueArray(
    fc.record({
      key: fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
      basis: fc.constantFrom<Basis>('consent', 'consent', 'legitimate_interest', 'contract', 'legal_obligation'),
      informed: fc.boolean(),
    }),
    { minLength: 1, maxLength: 8, selector: (purpose) => purpose.key },
  )
  .map((purposes) =>
    normaliseFlowTerms({
      name: 'Generated',
      pattern: 'standard',
      consent_duration: 'P1Y',
      purposes: purposes.map((purpose) => purpose.key),
      purpose_definitions: Object.fromEntries(
        purposes.map((purpose) => [
          purpose.key,
          purpose.basis === 'consent' ? { basis: 'consent', mechanism: purpose.informed ? 'informed' : 'explicit' } : { basis: purpose.basis },
        ]),
      ),
    }),
  );

const decisionArbitrary = fc.record(
  {
    decision: fc.constantFrom('granted', 'declined') as fc.Arbitrary<'granted' | 'declined'>,
    default_checked: fc.boolean(),
    mandatory: fc.boolean(),
  },
  { requiredKeys: ['decision'] },
);

/** Any attestation: each flow purpose present or not, with any flags, plus possibly unknown keys. */
const anyAttestation = (flow: FlowTerms) =>
  fc
    .tuple(
      fc.array(fc.option(decisionArbitrary, { nil: undefined }), { minLength: flow.purposes.length, maxLength: flow.purposes.length }),
      fc.dictionary(fc.stringMatching(/^zz[a-z]{0,4}$/), decisionArbitrary, { maxKeys: 2 }),
    )
    .map(([entries, unknown]) => {
      const decisions: AttestedDecisions = { ...unknown };
      flow.purposes.forEach((purpose, index) => {
        if (entries[index] !== undefined) decisions[purpose.key] = entries[index]!;
      });
      return decisions;
    });

/** An attestation the rules accept: consent present and clean, LI optional and not mandatory, no notice-only. */
const acceptedAttestation = (flow: FlowTerms) =>
  fc
    .array(fc.tuple(fc.constantFrom('granted', 'declined') as fc.Arbitrary<'granted' | 'declined'>, fc.boolean(), fc.boolean()), {
      minLength: flow.purposes.length,
      maxLength: flow.purposes.length,
    })
    .map((choices) => {
      const decisions: AttestedDecisions = {};
      flow.purposes.forEach((purpose, index) => {
        const [decision, flag, present] = choices[index];
        if (purpose.basis === 'consent') decisions[purpose.key] = { decision, default_checked: false, mandatory: false };
        else if (purpose.basis === 'legitimate_interest' && present) decisions[purpose.key] = { decision, default_checked: flag, mandatory: false };
      });
      return decisions;
    });

/** The purposes (and unknown keys) that break a rule, as an independent statement of the table. */
function offenders(flow: FlowTerms, decisions: AttestedDecisions, presentation: PresentationRule): Set<string> {
  const result = new Set<string>();
  const keys = new Set(flow.purposes.map((purpose) => purpose.key));
  for (const purpose of flow.purposes) {
    const entry = decisions[purpose.key];
    if (NOTICE_ONLY.includes(purpose.basis)) {
      if (entry) result.add(purpose.key);
    } else if (purpose.basis === 'consent') {
      if (!entry || entry.default_checked || entry.mandatory) result.add(purpose.key);
    } else if (entry?.mandatory) result.add(purpose.key);
    if (entry && !NOTICE_ONLY.includes(purpose.basis) && presentation === 'stated' && (entry.default_checked === undefined || entry.mandatory === undefined)) result.add(purpose.key);
  }
  for (const key of Object.keys(decisions)) if (!keys.has(key)) result.add(key);
  return result;
}

describe('recordAttestation properties', () => {
  const flowWithAttestation = (attestation: (flow: FlowTerms) => fc.Arbitrary<AttestedDecisions>) =>
    flowArbitrary.chain((flow) => attestation(flow).map((decisions) => ({ flow, decisions })));

  it('accepts or refuses exactly as the table says, naming every offending purpose at once', () => {
    fc.assert(
      fc.property(flowWithAttestation(anyAttestation), fc.constantFrom<PresentationRule>('stated', 'optional'), ({ flow, decisions }, presentation) => {
        const expected = offenders(flow, decisions, presentation);
        if (expected.size === 0) {
          expect(Object.keys(recordAttestation(flow, decisions, presentation))).toEqual(flow.purposes.map((purpose) => purpose.key));
        } else {
          const named = new Set(refusedFields(() => recordAttestation(flow, decisions, presentation)));
          expect(named).toEqual(new Set([...expected].map((key) => `decisions.${key}`)));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses and names every default-ticked or mandatory consent purpose', () => {
    fc.assert(
      fc.property(flowWithAttestation(anyAttestation), ({ flow, decisions }) => {
        const pressured = flow.purposes.filter(
          (purpose) => purpose.basis === 'consent' && (decisions[purpose.key]?.default_checked || decisions[purpose.key]?.mandatory),
        );
        fc.pre(pressured.length > 0);
        const named = refusedFields(() => recordAttestation(flow, decisions));
        for (const purpose of pressured) expect(named).toContain(`decisions.${purpose.key}`);
      }),
    );
  });

  it('records each accepted purpose by its type: consent as decided, LI ticked noticed / unticked objected, notice-only noticed', () => {
    fc.assert(
      fc.property(flowWithAttestation(acceptedAttestation), ({ flow, decisions }) => {
        const recorded = recordAttestation(flow, decisions);
        expect(Object.keys(recorded)).toEqual(flow.purposes.map((purpose) => purpose.key));
        for (const purpose of flow.purposes) {
          const entry = decisions[purpose.key];
          const expected =
            purpose.basis === 'consent'
              ? entry!.decision
              : purpose.basis === 'legitimate_interest'
                ? entry?.decision === 'declined'
                  ? 'objected'
                  : 'noticed'
                : 'noticed';
          expect(recorded[purpose.key]).toEqual({ status: expected, basis: purpose.basis });
        }
      }),
    );
  });

  describe('decisionShapeIssues', () => {
    it('names each malformed decision by its key without the terms, as the capture rules word it', () => {
      expect(
        decisionShapeIssues({
          newsletter: { decision: 'yes', default_checked: false, mandatory: false },
          analytics: 'granted',
          fraud: { decision: 'granted', default_checked: 'no', mandatory: false, note: 1 },
          ok: { decision: 'declined', default_checked: false, mandatory: false },
        }),
      ).toEqual([
        { field: 'decisions.newsletter', reason: 'decision must be granted or declined' },
        { field: 'decisions.analytics', reason: 'must be an object {decision, default_checked, mandatory}' },
        { field: 'decisions.fraud', reason: 'default_checked must be a boolean' },
        { field: 'decisions.fraud', reason: 'note is not a field of a decision (decision, default_checked, mandatory)' },
      ]);
      expect(decisionShapeIssues({ newsletter: { decision: 'granted' } }, 'optional')).toEqual([]);
      expect(decisionShapeIssues('not an object')).toEqual([]);
    });
  });
});
