import { FieldIssue, validationFailed } from '../errors';
import { FlowTerms } from '../flows/flow-terms';
import { FormChoice, FormDefinition, FormField } from './form-definition';

/*
 * The field mapping of a hosted form-builder connection, checked when it is saved ("Hosted
 * form-builder connection" and the Errors row on mapping in the specification):
 *
 * - `email` names the e-mail question (a field of type `email`): it binds the person.
 * - `external_id`, optional, names a hidden field carrying the organisation's own id for the person.
 * - `purposes` maps every purpose of the flow that takes a decision (consent, and legitimate interest
 *   with the right to object) to one question: a yes/no or legal question, or a choice question
 *   (multiple choice, dropdown, picture choice) with the reference of the choice that means yes.
 *
 * Refused, each by name (`mapping.purposes.<key>`, `mapping.purposes.<key>.field|choice`,
 * `mapping.email`, `mapping.external_id`), all of them at once (a purpose's misspelt field beside its
 * other problems):
 * - a consent purpose on a required question: a question that must be answered makes the consent a
 *   condition of sending the form, which consent can never be;
 * - a purpose on a question that cannot carry a decision: rating, number, opinion scale, free text
 *   and every other type that is neither yes/no, legal nor a choice;
 * - a choice question without the yes-choice reference, or with a reference that is not one of its
 *   choices; a choice reference on a question that has no choices;
 * - a purpose the flow does not have, a notice-only purpose (it takes no decision), and a purpose of
 *   the flow that takes a decision but is left unmapped;
 * - one question (or one choice of a question that takes several) mapped to two purposes: one answer
 *   would decide both; two choices of a question that takes one: its answer grants at most one;
 * - a field of a purpose's mapping other than `field` and `choice` (`…<key>.<field>`): dropping it
 *   would save something other than what the caller sent.
 *
 * A right-to-object purpose may sit on a required question: answering it is still a free choice
 * between objecting and not (the capture rules allow such a box shown ticked, too).
 */

export const BOOLEAN_DECISION_FIELD_TYPES = ['yes_no', 'legal'] as const;
export const CHOICE_DECISION_FIELD_TYPES = ['multiple_choice', 'dropdown', 'picture_choice'] as const;

/** The fields of one purpose's mapping: anything else is refused by name, not dropped. */
const PURPOSE_MAPPING_FIELDS: ReadonlySet<string> = new Set(['field', 'choice']);

const SCALE_TYPES = new Set(['rating', 'number', 'opinion_scale', 'nps']);
const FREE_TEXT_TYPES = new Set(['short_text', 'long_text']);

export interface FormMappingInput {
  email: string;
  external_id?: string;
  purposes: Record<string, { field: string; choice?: string }>;
}

export interface MappedPurpose {
  field: string;
  field_id: string;
  field_type: string;
  /** `consent`: the question's yes grants; `legitimate_interest`: its yes is an objection. */
  basis: 'consent' | 'legitimate_interest';
  /** For choice questions: the choice that means yes. */
  choice?: FormChoice;
}

/** A mapped purpose the flow version a delivery is read against takes no decision on (it lacks it, or it is notice-only there). */
export interface PurposeOutsideVersion {
  field: string;
  /** The question's id in the form's definition; null when the form no longer has the question. */
  field_id: string | null;
  /** Why its answer cannot be recorded against that version. */
  reason: string;
}

/** A mapping checked against a form and a flow version: what a submission is read with. */
export interface ResolvedFormMapping {
  email: { field: string; field_id: string };
  external_id?: string;
  purposes: Record<string, MappedPurpose>;
  /**
   * Only for a delivery (resolveFormMapping's `inForce`): the purposes set aside because the version
   * in force decides nothing on them. A submission that answers one of their questions is refused
   * by its name (submissionRecord); one that leaves it unanswered is recorded without it.
   */
  outside_version?: Record<string, PurposeOutsideVersion>;
}

/**
 * The flow version a delivery is read against: the one in force at its `submitted_at`, as the
 * Record API decides a record against the version in force at its `captured_at`. The mapping is
 * saved against the flow's active version, so it may map purposes that version lacks or took no
 * decision on; they are set aside (ResolvedFormMapping.outside_version), not refused.
 */
export interface VersionInForceAtSubmission {
  version: number;
}

export const FORM_MAPPING_REFUSED_MESSAGE = 'The field mapping breaks the mapping rules';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isChoiceType = (type: string) => (CHOICE_DECISION_FIELD_TYPES as readonly string[]).includes(type);
const isBooleanType = (type: string) => (BOOLEAN_DECISION_FIELD_TYPES as readonly string[]).includes(type);

/** The word with its indefinite article: "an opinion_scale", "a rating". */
const aOrAn = (word: string) => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;

/** Why a question of this type cannot carry a decision, or null when it can. */
export function fieldTypeProblem(type: string): string | null {
  if (isBooleanType(type) || isChoiceType(type)) return null;
  if (SCALE_TYPES.has(type)) return `is mapped to ${aOrAn(type)} question: a score or a number is not a decision; map a yes_no, legal or choice question`;
  if (FREE_TEXT_TYPES.has(type)) return `is mapped to ${aOrAn(type)} question: free text is not a decision; map a yes_no, legal or choice question`;
  return `is mapped to ${aOrAn(type)} question, which cannot carry a decision; map a yes_no, legal or choice question`;
}

const describeChoices = (field: FormField) =>
  field.choices.map((choice) => choice.ref ?? `(no ref) ${choice.label}`).join(', ') || 'none';

const MAPPING_ENTRY_SHAPE = 'must be {field: <question ref>, choice?: <choice ref>}';

const basisOf = (purpose: { basis: string }): MappedPurpose['basis'] => (purpose.basis === 'consent' ? 'consent' : 'legitimate_interest');

/**
 * Every refusal of one purpose's mapping (`at`, `mapping.purposes.<key>`), each problem named by
 * itself: a misspelt field beside a question the form lacks is two refusals, not the first of them
 * (the rest of the API names every field problem at once). A check that needs what an earlier one
 * refused (the question's choices, when the form has no such question) is left out. `mapped`: the
 * question (and its yes-choice) the purpose would hold, when the form has it and it can carry a
 * decision, so that another purpose on it is refused too.
 */
function purposeMappingIssues(
  at: string,
  entry: Record<string, unknown>,
  byRef: ReadonlyMap<string, FormField>,
  basis: MappedPurpose['basis'],
): { issues: FieldIssue[]; mapped?: { field: FormField; choice?: FormChoice } } {
  // A field we would drop is one the caller believes was saved (a misspelt `choice`, say).
  const issues: FieldIssue[] = Object.keys(entry)
    .filter((name) => !PURPOSE_MAPPING_FIELDS.has(name))
    .map((name) => ({ field: `${at}.${name}`, reason: 'is not a field of a purpose mapping (field, choice)' }));
  const choiceGiven = entry.choice !== undefined;
  const choiceWellFormed = !choiceGiven || (typeof entry.choice === 'string' && entry.choice.length > 0);
  if (typeof entry.field !== 'string' || entry.field.length === 0) issues.push({ field: at, reason: MAPPING_ENTRY_SHAPE });
  if (!choiceWellFormed) issues.push({ field: `${at}.choice`, reason: 'must be the ref of one of the question\'s choices' });
  if (typeof entry.field !== 'string' || entry.field.length === 0) return { issues };
  const field = byRef.get(entry.field);
  if (!field) return { issues: [...issues, { field: `${at}.field`, reason: `the form has no question with ref ${entry.field}` }] };
  // A question that cannot carry a decision is refused for that alone: whether it is required, or has choices, is moot.
  const typeProblem = fieldTypeProblem(field.type);
  if (typeProblem) return { issues: [...issues, { field: at, reason: typeProblem }] };
  if (basis === 'consent' && field.required) issues.push({ field: at, reason: `is mapped to the required question ${field.ref}: consent cannot be a condition of sending the form` });
  if (!choiceWellFormed) return { issues };
  if (!isChoiceType(field.type)) {
    if (choiceGiven) return { issues: [...issues, { field: `${at}.choice`, reason: `${field.ref} is ${aOrAn(field.type)} question: it has no choices` }] };
    return { issues, mapped: { field } };
  }
  if (!choiceGiven) {
    return { issues: [...issues, { field: `${at}.choice`, reason: `is missing: name the ref of the choice of ${field.ref} that means yes (its choices: ${describeChoices(field)})` }] };
  }
  const choice = field.choices.find((candidate) => candidate.ref === entry.choice);
  if (!choice) return { issues: [...issues, { field: `${at}.choice`, reason: `${String(entry.choice)} is not a choice of ${field.ref} (its choices: ${describeChoices(field)})` }] };
  return { issues, mapped: { field, choice } };
}

/**
 * Checks a mapping against the form's definition and the flow version's terms. Returns the resolved
 * mapping (question ids and types, the yes-choice) that submissions are read with, or throws
 * `validation_failed` with one issue per problem, in this order: e-mail, external id, the mapping's
 * purposes in the order given, then the flow's purposes left unmapped in flow order.
 *
 * With `inForce` (a delivery read against the version in force at its submission): a mapped purpose
 * that version lacks or takes no decision on is set aside (`outside_version`) instead of refused,
 * every question is read with that version's basis, and a purpose it decides that the mapping
 * leaves unmapped is refused naming the version: nothing is made up for a question never mapped.
 */
export function resolveFormMapping(terms: FlowTerms, definition: FormDefinition, input: unknown, inForce?: VersionInForceAtSubmission): ResolvedFormMapping {
  if (!isPlainObject(input)) throw validationFailed([{ field: 'mapping', reason: 'must be an object {email, external_id?, purposes}' }], FORM_MAPPING_REFUSED_MESSAGE);
  const issues: FieldIssue[] = [];
  const byRef = new Map(definition.fields.map((field) => [field.ref, field]));

  let email: ResolvedFormMapping['email'] | undefined;
  if (typeof input.email !== 'string' || input.email.length === 0) {
    issues.push({ field: 'mapping.email', reason: 'must name the ref of the form\'s e-mail question' });
  } else {
    const field = byRef.get(input.email);
    if (!field) issues.push({ field: 'mapping.email', reason: `the form has no question with ref ${input.email}` });
    else if (field.type !== 'email') issues.push({ field: 'mapping.email', reason: `must be an email question; ${field.ref} is ${aOrAn(field.type)} question` });
    else email = { field: field.ref, field_id: field.id };
  }

  let externalId: string | undefined;
  if (input.external_id !== undefined && input.external_id !== null) {
    if (typeof input.external_id !== 'string' || input.external_id.length === 0) {
      issues.push({ field: 'mapping.external_id', reason: 'must name one of the form\'s hidden fields' });
    } else if (!definition.hidden.includes(input.external_id)) {
      const known = definition.hidden.length > 0 ? definition.hidden.join(', ') : 'none';
      issues.push({ field: 'mapping.external_id', reason: `the form has no hidden field named ${input.external_id} (its hidden fields: ${known})` });
    } else {
      externalId = input.external_id;
    }
  }

  const purposes: Record<string, MappedPurpose> = {};
  const outside: Record<string, PurposeOutsideVersion> = {};
  const versionInForce = inForce ? `version ${inForce.version} of the flow, in force at form_response.submitted_at,` : '';
  /** A purpose a delivery's version decides nothing on: its question, when the mapping names one, is set aside. */
  const setAside = (key: string, entry: unknown, reason: string) => {
    if (!isPlainObject(entry) || typeof entry.field !== 'string' || entry.field.length === 0) return;
    outside[key] = { field: entry.field, field_id: byRef.get(entry.field)?.id ?? null, reason };
  };
  if (!isPlainObject(input.purposes)) {
    issues.push({ field: 'mapping.purposes', reason: 'must be an object of purpose key to {field, choice?}' });
  } else {
    const flowPurposes = new Map(terms.purposes.map((purpose) => [purpose.key, purpose]));
    const taken = new Map<string, string>();
    for (const [key, entry] of Object.entries(input.purposes)) {
      const at = `mapping.purposes.${key}`;
      const purpose = flowPurposes.get(key);
      if (!purpose) {
        if (inForce) setAside(key, entry, `${versionInForce} has no purpose ${key}`);
        else issues.push({ field: at, reason: 'is not a purpose of this flow' });
        continue;
      }
      if (!purpose.takes_decision) {
        if (inForce) setAside(key, entry, `${versionInForce} takes no decision on ${key} (${aOrAn(purpose.basis)} purpose)`);
        else issues.push({ field: at, reason: `is ${aOrAn(purpose.basis)} purpose: notice-only, it takes no decision and is not mapped to a question` });
        continue;
      }
      if (!isPlainObject(entry)) {
        issues.push({ field: at, reason: MAPPING_ENTRY_SHAPE });
        continue;
      }
      const refused = purposeMappingIssues(at, entry, byRef, basisOf(purpose));
      issues.push(...refused.issues);
      if (!refused.mapped) continue;
      const { field, choice } = refused.mapped;
      // A question one purpose holds is held for the others even when that purpose is refused otherwise.
      // Only a question that takes several choices gives each choice its own answer: on a single
      // choice question, picking one purpose's yes-choice would be the other's no.
      const slot = choice && field.allow_multiple_selection ? `${field.ref}#${choice.ref}` : field.ref;
      const holder = taken.get(slot);
      if (holder) {
        const reason =
          choice && !field.allow_multiple_selection
            ? `question ${field.ref} already decides ${holder}: it takes one choice, so its answer would grant at most one of the two purposes; map each purpose to a question of its own, or to a choice of a question that takes several`
            : `${choice ? `choice ${choice.ref} of ` : ''}question ${field.ref} already decides ${holder}: one answer cannot decide two purposes`;
        issues.push({ field: at, reason });
        continue;
      }
      taken.set(slot, key);
      if (refused.issues.length === 0) purposes[key] = { field: field.ref, field_id: field.id, field_type: field.type, basis: basisOf(purpose), ...(choice ? { choice } : {}) };
    }
    for (const purpose of terms.purposes) {
      if (purpose.takes_decision && !Object.prototype.hasOwnProperty.call(input.purposes, purpose.key)) {
        const reason = inForce
          ? `is not mapped: ${versionInForce} decides ${purpose.key} (${aOrAn(purpose.basis)} purpose), and the mapping has no question for it, so the submission cannot be read against that version`
          : 'is not mapped: every purpose of the flow that takes a decision needs a question';
        issues.push({ field: `mapping.purposes.${purpose.key}`, reason });
      }
    }
  }

  if (issues.length > 0 || !email) throw validationFailed(issues, FORM_MAPPING_REFUSED_MESSAGE);
  return { email, ...(externalId ? { external_id: externalId } : {}), purposes, ...(Object.keys(outside).length > 0 ? { outside_version: outside } : {}) };
}
