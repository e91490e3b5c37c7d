import { FieldIssue, validationFailed } from '../errors';
import { MAX_BODY_DEPTH, NESTED_TOO_DEEP, unstorableInputIssues } from '../input/storable-input';
import type { AttestedDecisions } from '../captures/attestation';
import { isZonedDateTime } from '../captures/captured-at';
import { emailProblem, externalIdProblem, normaliseExternalId } from '../residency/residency';
import { MappedPurpose, ResolvedFormMapping } from './mapping';

/*
 * A Typeform webhook delivery (https://www.typeform.com/developers/webhooks/example-payload/):
 * `{event_id, event_type: "form_response", form_response: {form_id, token, submitted_at, hidden,
 * definition, answers: [{field: {id, ref, type}, type, boolean | email | text | choice {id, label, ref}
 * | choices {ids, labels, refs} | …}]}}`, turned into what the Record API records.
 *
 * Reading a submission with a resolved mapping:
 * - A yes/no or legal question answered true is a yes; a choice question is a yes when the mapped
 *   choice is among those chosen (matched by its ref, else by its id, else, for a dropdown answered
 *   as text by older payloads, by its label).
 * - Consent purpose: yes → `granted`; no, or the optional question left unanswered → `declined` (an
 *   unanswered optional consent question is a decline, never silence).
 * - Right-to-object purpose: yes → an objection (`declined`, which the capture rules record as
 *   `objected`); no or unanswered → no objection (`granted`, recorded `noticed`).
 * - Every decision is attested as neither default-ticked nor mandatory: the mapping refused consent
 *   on required questions, and Typeform pre-selects no answer.
 * - An answer whose shape does not fit the mapped question (the form changed after the mapping was
 *   saved) is refused by purpose name.
 * - Read against the flow version in force at `submitted_at`: an answer to the question of a mapped
 *   purpose that version decides nothing on (ResolvedFormMapping.outside_version) is refused by
 *   purpose name; left unanswered, the purpose is not recorded, as the version does not have it.
 */

/** Typeform's "Send test request" fills every e-mail question with this address (see TYPEFORM_TEST_REQUEST_RULE). */
export const TYPEFORM_TEST_EMAIL = 'an_account@example.com';

/**
 * How the builder's test request is recognised. Typeform documents no marker for it; its sample
 * submission answers e-mail questions with `an_account@example.com`, an address at the reserved
 * `example.com` domain (RFC 2606) that no person can own. So a correctly signed delivery whose mapped
 * e-mail question carries exactly that address is the test request: answered as accepted, and
 * nothing is recorded.
 */
export const TYPEFORM_TEST_REQUEST_RULE =
  'a correctly signed delivery whose mapped e-mail answer is an_account@example.com (the placeholder of Typeform\'s "Send test request"; example.com is reserved by RFC 2606)';

export interface TypeformAnswer {
  field: { id: string | null; ref: string | null; type: string | null };
  type: string;
  [key: string]: unknown;
}

export interface TypeformSubmission {
  event_id: string;
  event_type: string;
  form_id: string;
  /** Typeform's id of this response: the same on every redelivery, so it is the idempotency key. */
  token: string;
  submitted_at: string;
  hidden: Record<string, unknown>;
  answers: TypeformAnswer[];
  /** The `form_response` object as received (its digest tells a redelivery from another body). */
  form_response: Record<string, unknown>;
}

export interface SubmissionRecord {
  email: string;
  external_id?: string;
  decisions: AttestedDecisions;
  captured_at: string;
  /** The purposes whose question the person answered, in the mapping's order: the receipt's `presentation_attested`. */
  presentation_stated: string[];
}

const TOKEN = /^[A-Za-z0-9_-]{1,100}$/;
/**
 * Typeform checks e-mail answers itself; this only keeps what is plainly not an address out of the
 * record (the caller checks the rest with the Record API's rule, isEmailAddress of submissionRecord).
 */
const EMAIL_SHAPE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;
const MAX_ANSWERS = 1000;
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * Reads a webhook body. Throws `validation_failed` naming what is missing or malformed
 * (`event_type`, `form_response.token`, `form_response.answers[3]`…). The event type is returned as
 * given; only `form_response` (a completed submission) is recorded, which the caller decides.
 */
export function parseTypeformSubmission(body: unknown): TypeformSubmission {
  if (!isPlainObject(body)) throw validationFailed([{ field: 'body', reason: 'must be the JSON object of a Typeform webhook' }]);
  const issues: FieldIssue[] = [];
  const eventId = text(body.event_id);
  if (!eventId || eventId.length > 100) issues.push({ field: 'event_id', reason: 'must be the delivery\'s event id' });
  const eventType = text(body.event_type);
  if (!eventType) issues.push({ field: 'event_type', reason: 'must be the event type (form_response)' });
  const response = body.form_response;
  if (!isPlainObject(response)) {
    issues.push({ field: 'form_response', reason: 'must be the submitted response' });
    throw validationFailed(issues, 'The delivery is not a Typeform submission');
  }
  // Only the depth here: text the database cannot keep is refused by the name of the answer it is in, below.
  if (unstorableInputIssues(response).some((issue) => issue.reason === NESTED_TOO_DEEP)) {
    throw validationFailed([{ field: 'form_response', reason: `nests more than ${MAX_BODY_DEPTH} levels deep: not a Typeform response` }], 'The delivery is not a Typeform submission');
  }
  const formId = text(response.form_id);
  if (!formId) issues.push({ field: 'form_response.form_id', reason: 'must be the form\'s id' });
  const token = text(response.token);
  if (!token || !TOKEN.test(token)) issues.push({ field: 'form_response.token', reason: 'must be the response token (letters, digits, _ and -)' });
  const submittedAt = text(response.submitted_at);
  // Typeform sends UTC (`Z`); a time without its zone would be read in the server's own zone, and a
  // day the month does not have rolled over into the next month, so both are refused, as the Record API does.
  if (!isZonedDateTime(submittedAt)) {
    issues.push({ field: 'form_response.submitted_at', reason: 'must be an ISO 8601 date-time with its zone' });
  }
  const hidden = response.hidden === undefined || response.hidden === null ? {} : response.hidden;
  if (!isPlainObject(hidden)) issues.push({ field: 'form_response.hidden', reason: 'must be an object of hidden field values' });
  const answers: TypeformAnswer[] = [];
  const rawAnswers = response.answers === undefined || response.answers === null ? [] : response.answers;
  if (!Array.isArray(rawAnswers) || rawAnswers.length > MAX_ANSWERS) {
    issues.push({ field: 'form_response.answers', reason: `must be an array of at most ${MAX_ANSWERS} answers` });
  } else {
    // A response answers each question once: a second answer to one (by its ref, or its id) would
    // leave which of them was meant to chance, so it is refused by name, never one picked.
    const answered = new Map<string, number>();
    rawAnswers.forEach((answer, index) => {
      if (!isPlainObject(answer) || !isPlainObject(answer.field) || !text(answer.type)) {
        issues.push({ field: `form_response.answers[${index}]`, reason: 'must be {field: {id, ref, type}, type, <value>}' });
        return;
      }
      const field = { id: text(answer.field.id), ref: text(answer.field.ref), type: text(answer.field.type) };
      const keys = [field.ref === null ? null : `ref:${field.ref}`, field.id === null ? null : `id:${field.id}`].filter((key): key is string => key !== null);
      const first = keys.map((key) => answered.get(key)).find((earlier) => earlier !== undefined);
      if (first !== undefined) {
        issues.push({ field: `form_response.answers[${index}]`, reason: `answers the same question as form_response.answers[${first}]: a response answers each question once` });
        return;
      }
      for (const key of keys) answered.set(key, index);
      answers.push({ ...answer, field, type: answer.type as string });
    });
  }
  if (issues.length > 0) throw validationFailed(issues, 'The delivery is not a Typeform submission');
  return {
    event_id: eventId!,
    event_type: eventType!,
    form_id: formId!,
    token: token!,
    submitted_at: new Date(submittedAt!).toISOString(),
    hidden: hidden as Record<string, unknown>,
    answers,
    form_response: response,
  };
}

function answerTo(submission: TypeformSubmission, ref: string, id: string | null): TypeformAnswer | undefined {
  return submission.answers.find((answer) => answer.field.ref === ref) ?? (id === null ? undefined : submission.answers.find((answer) => answer.field.id === id));
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The mapped question's yes, no, or why the answer cannot be read as either. */
function yesOf(mapped: MappedPurpose, answer: TypeformAnswer): boolean | { problem: string } {
  if (mapped.choice === undefined) {
    if (answer.type === 'boolean' && typeof answer.boolean === 'boolean') return answer.boolean;
    // A yes/no answer whose value is no boolean is a malformed delivery, not a changed form.
    if (answer.type === 'boolean') return { problem: `the answer to ${mapped.field} is a yes/no answer without a boolean value (true or false)` };
    return { problem: `the answer to ${mapped.field} is ${answer.type}, not yes/no: the form changed since the mapping was saved` };
  }
  const { ref, id, label } = mapped.choice;
  // What the respondent typed as "Other" is no choice of the form's, whatever it says: a label equal
  // to it is not matched (an "Other" typed "Yes" is not the choice labelled Yes).
  const matches = (refs: string[], ids: string[], labels: string[], other: unknown) =>
    (ref !== null && refs.includes(ref)) ||
    (id !== null && ids.includes(id)) ||
    (refs.length === 0 && ids.length === 0 && labels.includes(label) && label !== other);
  if (answer.type === 'choice' && isPlainObject(answer.choice)) {
    const chosen = answer.choice;
    return matches(stringsOf([chosen.ref]), stringsOf([chosen.id]), stringsOf([chosen.label]), chosen.other);
  }
  if (answer.type === 'choices' && isPlainObject(answer.choices)) {
    const chosen = answer.choices;
    return matches(stringsOf(chosen.refs), stringsOf(chosen.ids), stringsOf(chosen.labels), chosen.other);
  }
  // Older payloads answer a dropdown as text: the chosen label.
  if (answer.type === 'text' && mapped.field_type === 'dropdown' && typeof answer.text === 'string') return answer.text === label;
  return { problem: `the answer to ${mapped.field} is ${answer.type}, not a choice: the form changed since the mapping was saved` };
}

/** The answer to the mapped e-mail question, trimmed; undefined when unanswered. */
export function submissionEmail(question: ResolvedFormMapping['email'], submission: TypeformSubmission): string | undefined {
  const answer = answerTo(submission, question.field, question.field_id);
  return answer && answer.type === 'email' && typeof answer.email === 'string' && answer.email.trim() ? answer.email.trim() : undefined;
}

/**
 * Whether this delivery is the builder's test request (TYPEFORM_TEST_REQUEST_RULE). It needs only the
 * e-mail question, so a test request is recognised even when the rest of the mapping no longer fits.
 */
export function isTypeformTestRequest(question: ResolvedFormMapping['email'], submission: TypeformSubmission): boolean {
  return submissionEmail(question, submission)?.toLowerCase() === TYPEFORM_TEST_EMAIL;
}

/**
 * What the Record API records for a submission: the person (the e-mail answer, the hidden external
 * id), a decision per mapped purpose, and `captured_at` = Typeform's `submitted_at`. Throws
 * `validation_failed` naming `email`, `external_id` or `decisions.<purpose>` when the submission
 * cannot be read with the mapping.
 */
export function submissionRecord(
  mapping: ResolvedFormMapping,
  submission: TypeformSubmission,
  isEmailAddress: (email: string) => boolean = (email) => email.length <= 254 && EMAIL_SHAPE.test(email),
): SubmissionRecord {
  const issues: FieldIssue[] = [];
  const email = submissionEmail(mapping.email, submission);
  if (!email) issues.push({ field: 'email', reason: `the e-mail question ${mapping.email.field} is unanswered: there is nobody to record the consent for` });
  // An address the Record API would refuse is one no one could name afterwards (consent_status, the records page).
  else {
    // The Record API's rule (emailProblem): over a limit is said by name, as every entry point says it.
    const problem = emailProblem(email, (value) => EMAIL_SHAPE.test(value) && isEmailAddress(value));
    if (problem?.endsWith('(an e-mail address limit)')) issues.push({ field: 'email', reason: `the answer to ${mapping.email.field} ${problem}` });
    else if (problem) issues.push({ field: 'email', reason: `the answer to ${mapping.email.field} is not an e-mail address` });
  }

  let externalId: string | undefined;
  if (mapping.external_id) {
    const given = submission.hidden[mapping.external_id];
    // A whole number is the id as text (a hidden field sent as a JSON number); anything else that is not text names no one and is refused, not dropped.
    const value = typeof given === 'number' && Number.isSafeInteger(given) ? String(given) : given;
    // An empty (or blank) hidden field names no one; anything else is taken by the Record API's rule (externalIdProblem).
    if (typeof value === 'string' && value.trim().length > 0) {
      const problem = externalIdProblem(value);
      if (problem) issues.push({ field: 'external_id', reason: `the hidden field ${mapping.external_id} ${problem}` });
      else externalId = normaliseExternalId(value);
    } else if (value !== undefined && value !== null && typeof value !== 'string') {
      issues.push({ field: 'external_id', reason: `the hidden field ${mapping.external_id} must be text, not ${Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`}` });
    }
  }

  const decisions: AttestedDecisions = {};
  // The purposes whose question the person answered: only these were surely shown to them (a form's
  // logic can skip a question), so only their presentation is attested on the receipt; a legitimate
  // interest left unanswered is noticed, which attests nothing either.
  const presented: string[] = [];
  for (const [key, mapped] of Object.entries(mapping.purposes)) {
    const answer = answerTo(submission, mapped.field, mapped.field_id);
    let yes = false;
    if (answer) {
      presented.push(key);
      const read = yesOf(mapped, answer);
      if (typeof read !== 'boolean') {
        issues.push({ field: `decisions.${key}`, reason: read.problem });
        continue;
      }
      yes = read;
    }
    const granted = mapped.basis === 'consent' ? yes : !yes;
    decisions[key] = { decision: granted ? 'granted' : 'declined', default_checked: false, mandatory: false };
  }
  // The person answered a question the version in force decides nothing on: recording without it
  // would drop what they said (an objection, say), and no version in force then can hold it.
  for (const [key, question] of Object.entries(mapping.outside_version ?? {})) {
    if (answerTo(submission, question.field, question.field_id)) {
      issues.push({ field: `decisions.${key}`, reason: `the answer to ${question.field} cannot be recorded: ${question.reason}` });
    }
  }

  if (issues.length > 0) throw validationFailed(issues, 'The submission cannot be recorded with this connection\'s mapping');
  return { email: email!, ...(externalId ? { external_id: externalId } : {}), decisions, captured_at: submission.submitted_at, presentation_stated: presented };
}
