import { FieldIssue, validationFailed } from '../errors';
import { FlowTerms, PURPOSE_KEY_PATTERN, PurposeTerms } from '../flows/flow-terms';

/*
 * The consent field (`service-consent-field`): which purposes it renders and how, what a capture from
 * it must say to match that rendering, and the rendering evidence its records carry. Pure: the caller
 * has the flow version's terms, the verified render proof and what the frame observed.
 *
 * Decisions made where the specification leaves room:
 * - A consent purpose is an unticked checkbox, a right-to-object (legitimate interest) purpose a ticked
 *   one with the objection wording (unticking it is the objection), a notice-only purpose text without
 *   a control. A required item is always notice-only (the flow terms refuse `required` elsewhere), so
 *   it never gets a control: the organisation's own terms checkbox stays its own.
 * - The `purposes` subset may leave out right-to-object and notice-only purposes (they record
 *   `noticed` when absent, as every capture does), never a consent purpose: such a subset is refused
 *   naming the purpose, as are unknown or repeated keys.
 * - A capture from the field must state exactly the rendered controls, each as rendered
 *   (`default_checked` true only for the objection box, `mandatory` never): the frame reads its own
 *   controls, so anything else did not come from that rendering.
 * - Rendering evidence has one entry per rendered purpose. What the service vouches for (renderer,
 *   notice version, render time, the origin it rendered for) comes from the signed render proof; what
 *   only the browser saw (the host origin its messages came from, whether a control was changed and
 *   only by trusted gestures, visibility at submit and how it was measured) comes from the frame and
 *   is named as such.
 */

/** How the field presents a purpose. */
export type FieldControl = 'consent' | 'objection' | 'notice';

/** The renderer named in rendering evidence (element name / major version). */
export const FIELD_RENDERER = 'service-consent-field/1';

/** How the frame measured visibility at submit. */
export const VISIBILITY_MEASUREMENTS = ['intersection_observer_v2', 'intersection_observer', 'unavailable'] as const;
export type VisibilityMeasurement = (typeof VISIBILITY_MEASUREMENTS)[number];

export function fieldControlOf(purpose: Pick<PurposeTerms, 'basis' | 'takes_decision'>): FieldControl {
  if (!purpose.takes_decision) return 'notice';
  return purpose.basis === 'consent' ? 'consent' : 'objection';
}

/** The presentation a control purpose is rendered with (and must be attested with). */
export function fieldPresentation(control: Exclude<FieldControl, 'notice'>): { default_checked: boolean; mandatory: false } {
  return { default_checked: control === 'objection', mandatory: false };
}

/**
 * The purposes the field renders, in flow order: all of them, or the requested subset. Throws
 * `validation_failed` on `purposes`, one issue per problem, naming the key.
 */
export function selectFieldPurposes(terms: FlowTerms, requested?: readonly string[]): PurposeTerms[] {
  if (requested === undefined || requested.length === 0) return [...terms.purposes];
  const issues: FieldIssue[] = [];
  const known = new Map(terms.purposes.map((purpose) => [purpose.key, purpose]));
  const seen = new Set<string>();
  for (const key of requested) {
    if (!PURPOSE_KEY_PATTERN.test(key)) issues.push({ field: 'purposes', reason: `${JSON.stringify(key.slice(0, 80))} is not a purpose key` });
    else if (!known.has(key)) issues.push({ field: 'purposes', reason: `${key} is not a purpose of this flow` });
    else if (seen.has(key)) issues.push({ field: 'purposes', reason: `${key} is listed twice` });
    seen.add(key);
  }
  for (const purpose of terms.purposes) {
    if (purpose.basis === 'consent' && !seen.has(purpose.key)) {
      issues.push({ field: 'purposes', reason: `${purpose.key} is a consent purpose: the field renders every consent purpose, it can never be omitted` });
    }
  }
  if (issues.length > 0) throw validationFailed(issues, 'The purposes of the consent field are not valid');
  return terms.purposes.filter((purpose) => seen.has(purpose.key));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether the field rendered `key` at all: its own keys only, not what every object inherits (`toString`). */
function wasRendered(rendered: Readonly<Record<string, FieldControl>>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(rendered, key);
}

/**
 * Why a capture's decisions do not match what the field rendered (empty when they do): every
 * rendered control has its decision with the presentation it was rendered with; nothing else is sent.
 */
export function fieldDecisionIssues(rendered: Readonly<Record<string, FieldControl>>, decisions: unknown): FieldIssue[] {
  if (!isPlainObject(decisions)) return [{ field: 'decisions', reason: 'must be an object of purpose key to {decision, default_checked, mandatory}' }];
  const issues: FieldIssue[] = [];
  for (const [key, control] of Object.entries(rendered)) {
    const entry = decisions[key];
    const field = `decisions.${key}`;
    if (control === 'notice') {
      if (entry !== undefined) issues.push({ field, reason: 'was rendered as text (notice-only): it takes no decision' });
      continue;
    }
    if (entry === undefined) {
      issues.push({ field, reason: 'is a control the consent field rendered: its decision is missing' });
      continue;
    }
    if (!isPlainObject(entry)) {
      issues.push({ field, reason: 'must be an object {decision, default_checked, mandatory}' });
      continue;
    }
    const expected = fieldPresentation(control);
    if (entry.default_checked !== expected.default_checked) {
      issues.push({ field, reason: `default_checked must be ${expected.default_checked}: the field rendered this box ${expected.default_checked ? 'ticked' : 'unticked'}` });
    }
    if (entry.mandatory !== false) issues.push({ field, reason: 'mandatory must be false: the field renders no mandatory control' });
  }
  for (const key of Object.keys(decisions)) {
    if (!wasRendered(rendered, key) && decisions[key] !== undefined) issues.push({ field: `decisions.${key}`, reason: 'was not rendered by the consent field' });
  }
  return issues;
}

/** What the service vouches for: the facts of the verified render proof. */
export interface FieldRenderFacts {
  noticeVersion: string;
  renderedAt: string;
  /** The host origin the field was rendered for (and framed by, through frame-ancestors). */
  hostOrigin: string;
  /** The language the field's own text was rendered in. */
  locale: string;
  rendered: Readonly<Record<string, FieldControl>>;
}

/** What only the browser saw, as the frame reports it (`rendering_evidence` of the capture body). */
export interface FieldObservations {
  /** The origin the browser gave the host page's messages to the frame. */
  host_origin: unknown;
  /** Per rendered control: changed at all, and changed only by trusted gestures (`event.isTrusted`). */
  controls: unknown;
  visible_at_submit?: unknown;
  visibility_measurement: unknown;
}

/** The fields of a rendered control's evidence, and no others. */
const CONTROL_EVIDENCE_FIELDS = ['changed', 'trusted_gesture'];

/**
 * The `rendering_evidence` entries of a field capture, or `validation_failed` naming the
 * `rendering_evidence.*` fields that contradict the rendering or are malformed.
 */
export function fieldRenderingEvidence(facts: FieldRenderFacts, observed: FieldObservations): Array<Record<string, unknown>> {
  const issues: FieldIssue[] = [];
  if (observed.host_origin !== facts.hostOrigin) {
    issues.push({ field: 'rendering_evidence.host_origin', reason: 'differs from the origin the field was rendered for' });
  }
  const measurement = observed.visibility_measurement;
  if (!(VISIBILITY_MEASUREMENTS as readonly unknown[]).includes(measurement)) {
    issues.push({ field: 'rendering_evidence.visibility_measurement', reason: `must be one of ${VISIBILITY_MEASUREMENTS.join(', ')}` });
  }
  const visible = observed.visible_at_submit;
  if (measurement === 'unavailable' ? visible !== undefined : typeof visible !== 'boolean') {
    issues.push({ field: 'rendering_evidence.visible_at_submit', reason: measurement === 'unavailable' ? 'must be absent when visibility was not measured' : 'must be a boolean' });
  }
  const controls = isPlainObject(observed.controls) ? observed.controls : undefined;
  if (!controls) issues.push({ field: 'rendering_evidence.controls', reason: 'must be an object of purpose key to {changed, trusted_gesture}' });
  const gestures = new Map<string, { changed: boolean; trusted_gesture: boolean }>();
  for (const [key, control] of Object.entries(facts.rendered)) {
    if (control === 'notice' || !controls) continue;
    const entry = controls[key];
    const field = `rendering_evidence.controls.${key}`;
    if (!isPlainObject(entry) || typeof entry.changed !== 'boolean' || typeof entry.trusted_gesture !== 'boolean') {
      issues.push({ field, reason: 'must be {changed: boolean, trusted_gesture: boolean} for every control the field rendered' });
    } else if (Object.keys(entry).some((name) => !CONTROL_EVIDENCE_FIELDS.includes(name))) {
      // A field the evidence never holds is refused by name, as a decision's is, never dropped.
      for (const name of Object.keys(entry).filter((name) => !CONTROL_EVIDENCE_FIELDS.includes(name))) {
        issues.push({ field: `${field}.${name}`, reason: `is not a field of a control's evidence (${CONTROL_EVIDENCE_FIELDS.join(', ')})` });
      }
    } else if (entry.trusted_gesture && !entry.changed) {
      issues.push({ field, reason: 'trusted_gesture can only be true for a control that was changed' });
    } else {
      gestures.set(key, { changed: entry.changed, trusted_gesture: entry.trusted_gesture });
    }
  }
  for (const key of Object.keys(controls ?? {})) {
    if (!wasRendered(facts.rendered, key) || facts.rendered[key] === 'notice') {
      issues.push({ field: `rendering_evidence.controls.${key}`, reason: 'is not a control the consent field rendered' });
    }
  }
  if (issues.length > 0) throw validationFailed(issues, 'The rendering evidence does not match the rendered field');

  return Object.entries(facts.rendered).map(([key, control]) => {
    const entry = {
      purpose_id: key,
      renderer: FIELD_RENDERER,
      shown_as: control === 'consent' ? 'unticked_checkbox' : control === 'objection' ? 'ticked_checkbox_objection' : 'notice_text',
      notice_version: facts.noticeVersion,
      locale: facts.locale,
      rendered_at: facts.renderedAt,
      host_origin: facts.hostOrigin,
      ...(control === 'notice' ? {} : gestures.get(key)),
      ...(typeof visible === 'boolean' ? { visible_at_submit: visible } : {}),
      visibility_measurement: measurement,
    };
    return { ...entry, asserted_by_browser: BROWSER_ASSERTED_FIELDS.filter((name) => name in entry) };
  });
}

/**
 * The fields of a rendering evidence entry that rest on the browser's word, named in the entry's
 * `asserted_by_browser`: the host origin the page asked the field for (a browser enforces it with
 * `frame-ancestors`; a script fetching the page names any allowed origin), and what the frame reports
 * it saw (changes, trusted gestures, visibility). Anyone who can fetch the field page can send
 * them; the receipt says so instead of presenting them as observed. The rest (renderer, how each
 * purpose was shown, the notice version, locale and render time) the service knows from its own
 * signed render proof.
 */
export const BROWSER_ASSERTED_FIELDS = ['host_origin', 'changed', 'trusted_gesture', 'visible_at_submit', 'visibility_measurement'] as const;
