import { FieldIssue, validationFailed } from '../errors';

/*
 * A hosted form's definition, as far as the mapping rules need it: every question with its stable
 * reference, type, whether it is required and, for choice questions, its choices. Read from the JSON
 * Typeform's `GET /forms/{form_id}` returns (https://www.typeform.com/developers/create/reference/retrieve-form/):
 * `fields[]` of `{id, ref, type, title, properties: {choices: [{id, ref, label}], allow_multiple_selection,
 * fields (inside a group)}, validations: {required}}` and `hidden: [name…]`.
 *
 * Choices made here:
 * - Questions inside a `group` or `inline_group` are questions of the form like any other.
 * - Choices are read from `properties.choices` (the Create API) or `choices` (the definition inside a
 *   webhook payload), whichever is present.
 * - A question without a `ref` is refused: the mapping names questions by ref, and Typeform gives every
 *   question one. Two questions with the same ref are refused for the same reason.
 * - Anything else in the document (title, theme, logic, screens) is not kept.
 */

export interface FormChoice {
  id: string | null;
  ref: string | null;
  label: string;
}

export interface FormField {
  id: string;
  ref: string;
  type: string;
  required: boolean;
  allow_multiple_selection: boolean;
  choices: FormChoice[];
}

export interface FormDefinition {
  /** The form's id as the document states it (null when absent). */
  id: string | null;
  fields: FormField[];
  /** Names of the hidden fields (URL parameters the form passes through). */
  hidden: string[];
}

const MAX_FIELDS = 1000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 && value.length <= 500 ? value : null);

function choicesOf(raw: Record<string, unknown>, at: string, issues: FieldIssue[]): FormChoice[] {
  const properties = isPlainObject(raw.properties) ? raw.properties : {};
  const list = Array.isArray(properties.choices) ? properties.choices : Array.isArray(raw.choices) ? raw.choices : [];
  const choices: FormChoice[] = [];
  list.forEach((choice, index) => {
    if (!isPlainObject(choice)) {
      issues.push({ field: `${at}.choices[${index}]`, reason: 'must be an object {id, ref, label}' });
      return;
    }
    choices.push({ id: text(choice.id), ref: text(choice.ref), label: typeof choice.label === 'string' ? choice.label : '' });
  });
  return choices;
}

/**
 * Reads a Typeform form definition (the `GET /forms/{form_id}` document) into what the mapping rules
 * use. Throws `validation_failed` naming every problem under `field` (for example
 * `form_definition.fields[2].ref`).
 */
export function parseTypeformDefinition(input: unknown, field = 'form_definition'): FormDefinition {
  if (!isPlainObject(input)) throw validationFailed([{ field, reason: 'must be the JSON object Typeform returns for GET /forms/{form_id}' }]);
  const issues: FieldIssue[] = [];
  if (!Array.isArray(input.fields)) {
    throw validationFailed([{ field: `${field}.fields`, reason: 'must be the array of the form\'s questions' }]);
  }
  const fields: FormField[] = [];
  const seen = new Set<string>();
  const visit = (list: unknown[], at: string) => {
    list.forEach((raw, index) => {
      const here = `${at}[${index}]`;
      if (!isPlainObject(raw)) {
        issues.push({ field: here, reason: 'must be an object' });
        return;
      }
      const type = text(raw.type);
      if (!type) {
        issues.push({ field: `${here}.type`, reason: 'must be the question type, such as yes_no or multiple_choice' });
        return;
      }
      const properties = isPlainObject(raw.properties) ? raw.properties : {};
      if ((type === 'group' || type === 'inline_group') && Array.isArray(properties.fields)) {
        visit(properties.fields, `${here}.properties.fields`);
      }
      const ref = text(raw.ref);
      if (!ref) {
        issues.push({ field: `${here}.ref`, reason: 'is missing: the mapping names questions by their ref' });
        return;
      }
      if (seen.has(ref)) {
        issues.push({ field: `${here}.ref`, reason: `${ref} names two questions` });
        return;
      }
      seen.add(ref);
      const validations = isPlainObject(raw.validations) ? raw.validations : {};
      fields.push({
        id: text(raw.id) ?? ref,
        ref,
        type,
        required: validations.required === true,
        allow_multiple_selection: properties.allow_multiple_selection === true || raw.allow_multiple_selections === true,
        choices: choicesOf(raw, here, issues),
      });
    });
  };
  visit(input.fields, `${field}.fields`);
  if (fields.length > MAX_FIELDS) issues.push({ field: `${field}.fields`, reason: `more than ${MAX_FIELDS} questions` });

  const hidden: string[] = [];
  if (input.hidden !== undefined && input.hidden !== null) {
    if (!Array.isArray(input.hidden)) issues.push({ field: `${field}.hidden`, reason: 'must be the array of hidden field names' });
    else
      input.hidden.forEach((name, index) => {
        if (text(name)) hidden.push(name as string);
        else issues.push({ field: `${field}.hidden[${index}]`, reason: 'must be a hidden field name' });
      });
  }
  if (issues.length > 0) throw validationFailed(issues, 'The form definition cannot be read');
  return { id: text(input.id), fields, hidden };
}
