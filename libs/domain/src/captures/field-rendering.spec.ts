import { DomainError } from '../errors';
import { normaliseFlowTerms } from '../flows';
import { recordAttestation } from './attestation';
import { fieldControlOf, fieldDecisionIssues, fieldRenderingEvidence, FieldRenderFacts, fieldPresentation, selectFieldPurposes } from './field-rendering';

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

/** marketing, research (consent), fraud (legitimate interest), tos (contract, required). */
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

const rendered = Object.fromEntries(terms.purposes.map((p) => [p.key, fieldControlOf(p)]));

describe('which purposes the consent field renders', () => {
  it('renders consent as unticked boxes, the right to object as a ticked box, notice-only purposes (the required one too) as text', () => {
    expect(rendered).toEqual({ marketing: 'consent', research: 'consent', fraud: 'objection', tos: 'notice' });
    expect(fieldPresentation('consent')).toEqual({ default_checked: false, mandatory: false });
    expect(fieldPresentation('objection')).toEqual({ default_checked: true, mandatory: false });
  });

  it('renders every purpose by default, and a subset in flow order', () => {
    expect(selectFieldPurposes(terms).map((p) => p.key)).toEqual(['marketing', 'research', 'fraud', 'tos']);
    expect(selectFieldPurposes(terms, []).map((p) => p.key)).toEqual(['marketing', 'research', 'fraud', 'tos']);
    expect(selectFieldPurposes(terms, ['research', 'marketing']).map((p) => p.key)).toEqual(['marketing', 'research']);
    expect(selectFieldPurposes(terms, ['fraud', 'research', 'marketing']).map((p) => p.key)).toEqual(['marketing', 'research', 'fraud']);
  });

  it('refuses by name a subset that omits a consent purpose, an unknown, malformed or repeated key', () => {
    const error = refusal(() => selectFieldPurposes(terms, ['marketing', 'marketing', 'nope', 'Bad Key', 'fraud']));
    expect(error.details).toEqual([
      { field: 'purposes', reason: 'marketing is listed twice' },
      { field: 'purposes', reason: 'nope is not a purpose of this flow' },
      { field: 'purposes', reason: '"Bad Key" is not a purpose key' },
      { field: 'purposes', reason: 'research is a consent purpose: the field renders every consent purpose, it can never be omitted' },
    ]);
  });
});

describe('a capture from the consent field', () => {
  const asRendered = {
    marketing: { decision: 'granted', default_checked: false, mandatory: false },
    research: { decision: 'declined', default_checked: false, mandatory: false },
    fraud: { decision: 'declined', default_checked: true, mandatory: false },
  };

  it('matches when it states each rendered control as rendered, and then passes the capture rules', () => {
    expect(fieldDecisionIssues(rendered, asRendered)).toEqual([]);
    // Unticking the objection box is the objection.
    expect(recordAttestation(terms, asRendered as never)).toMatchObject({ marketing: { status: 'granted' }, research: { status: 'declined' }, fraud: { status: 'objected' }, tos: { status: 'noticed' } });
  });

  it('names every control it leaves out or misstates, and anything it was not rendered', () => {
    const issues = fieldDecisionIssues(
      { marketing: 'consent', fraud: 'objection', tos: 'notice' },
      {
        fraud: { decision: 'granted', default_checked: false, mandatory: true },
        tos: { decision: 'granted', default_checked: false, mandatory: false },
        research: { decision: 'granted', default_checked: false, mandatory: false },
      },
    );
    expect(issues).toEqual([
      { field: 'decisions.marketing', reason: 'is a control the consent field rendered: its decision is missing' },
      { field: 'decisions.fraud', reason: 'default_checked must be true: the field rendered this box ticked' },
      { field: 'decisions.fraud', reason: 'mandatory must be false: the field renders no mandatory control' },
      { field: 'decisions.tos', reason: 'was rendered as text (notice-only): it takes no decision' },
      { field: 'decisions.research', reason: 'was not rendered by the consent field' },
    ]);
    expect(fieldDecisionIssues(rendered, [])).toEqual([{ field: 'decisions', reason: 'must be an object of purpose key to {decision, default_checked, mandatory}' }]);
    expect(fieldDecisionIssues(rendered, { ...asRendered, marketing: 'yes' })).toEqual([{ field: 'decisions.marketing', reason: 'must be an object {decision, default_checked, mandatory}' }]);
    // A key every object inherits was not rendered either.
    expect(fieldDecisionIssues(rendered, { ...asRendered, constructor: asRendered.marketing })).toEqual([{ field: 'decisions.constructor', reason: 'was not rendered by the consent field' }]);
  });
});

describe('rendering evidence', () => {
  const facts: FieldRenderFacts = {
    noticeVersion: 'notice:flw_dev_0123456789abcdef:0123456789abcdef',
    renderedAt: '2025-03-02T08:14:02.000Z',
    hostOrigin: 'https://shop.example',
    locale: 'de',
    rendered: { marketing: 'consent', fraud: 'objection', tos: 'notice' },
  };
  const observed = {
    host_origin: 'https://shop.example',
    controls: { marketing: { changed: true, trusted_gesture: true }, fraud: { changed: false, trusted_gesture: false } },
    visible_at_submit: true,
    visibility_measurement: 'intersection_observer_v2',
  };

  it('has one entry per rendered purpose: the proof facts, and what the browser saw for each control', () => {
    const common = {
      renderer: 'service-consent-field/1',
      notice_version: facts.noticeVersion,
      locale: 'de',
      rendered_at: facts.renderedAt,
      host_origin: 'https://shop.example',
      visible_at_submit: true,
      visibility_measurement: 'intersection_observer_v2',
    };
    const asserted = ['host_origin', 'changed', 'trusted_gesture', 'visible_at_submit', 'visibility_measurement'];
    expect(fieldRenderingEvidence(facts, observed)).toEqual([
      { purpose_id: 'marketing', shown_as: 'unticked_checkbox', changed: true, trusted_gesture: true, ...common, asserted_by_browser: asserted },
      { purpose_id: 'fraud', shown_as: 'ticked_checkbox_objection', changed: false, trusted_gesture: false, ...common, asserted_by_browser: asserted },
      // A notice has no control to change: only the origin and the visibility rest on the browser's word.
      { purpose_id: 'tos', shown_as: 'notice_text', ...common, asserted_by_browser: ['host_origin', 'visible_at_submit', 'visibility_measurement'] },
    ]);
  });

  it('leaves visibility out when it could not be measured, and does not name it as asserted', () => {
    const [entry] = fieldRenderingEvidence(facts, { ...observed, visible_at_submit: undefined, visibility_measurement: 'unavailable' });
    expect(entry).not.toHaveProperty('visible_at_submit');
    expect(entry.visibility_measurement).toBe('unavailable');
    expect(entry.asserted_by_browser).toEqual(['host_origin', 'changed', 'trusted_gesture', 'visibility_measurement']);
  });

  it('refuses, naming the field, what contradicts the rendering or is malformed', () => {
    const error = refusal(() =>
      fieldRenderingEvidence(facts, {
        host_origin: 'https://evil.example',
        controls: { marketing: { changed: false, trusted_gesture: true }, tos: { changed: true, trusted_gesture: true } },
        visible_at_submit: 'yes',
        visibility_measurement: 'guess',
      }),
    );
    expect(error.details!.map((d) => d.field)).toEqual([
      'rendering_evidence.host_origin',
      'rendering_evidence.visibility_measurement',
      'rendering_evidence.visible_at_submit',
      'rendering_evidence.controls.marketing',
      'rendering_evidence.controls.fraud',
      'rendering_evidence.controls.tos',
    ]);
    // A key every object inherits (toString, constructor) is no rendered control either.
    const inherited = { changed: true, trusted_gesture: true };
    expect(refusal(() => fieldRenderingEvidence(facts, { ...observed, controls: { ...observed.controls, toString: inherited, constructor: inherited } })).details).toEqual([
      { field: 'rendering_evidence.controls.toString', reason: 'is not a control the consent field rendered' },
      { field: 'rendering_evidence.controls.constructor', reason: 'is not a control the consent field rendered' },
    ]);
    // A field a control's evidence never holds is refused by name, not dropped.
    const controls = observed.controls as Record<string, object>;
    expect(refusal(() => fieldRenderingEvidence(facts, { ...observed, controls: { ...controls, marketing: { ...controls.marketing, value: 'secret' } } })).details).toEqual([
      { field: 'rendering_evidence.controls.marketing.value', reason: "is not a field of a control's evidence (changed, trusted_gesture)" },
    ]);
    expect(refusal(() => fieldRenderingEvidence(facts, { ...observed, controls: null })).details).toEqual([
      { field: 'rendering_evidence.controls', reason: 'must be an object of purpose key to {changed, trusted_gesture}' },
    ]);
  });
});
