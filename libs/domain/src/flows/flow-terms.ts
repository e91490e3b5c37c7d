import { DomainError, FieldIssue } from '../errors';
import { canonicalJson, JsonObject, JsonValue } from './canonical-json';
import { isZeroDuration, parseIsoDuration } from './iso-duration';

/*
 * Flow terms: what a flow declares (data fields, purposes, retention, revocation policy, steps), as
 * validated and normalised from the body of `POST /api/v1/applications/<app>/flows`. Pure: no I/O.
 *
 * Decisions this module makes where the specification and contract are silent:
 * - Unknown fields are refused (at the top level, in a purpose definition, in a data field object),
 *   like every other request body. `null` for an optional field means "absent" (so a PATCH can clear it).
 * - `name`, `title`, `description`, labels and `jurisdiction` are trimmed; an empty `title`,
 *   `description` or purpose description is stored as null.
 * - `locale` is stored with normalised case (`en-gb` → `en-GB`, `zh-hant-tw` → `zh-Hant-TW`).
 * - `retention` and `revocation_policy` are either a free-text string (1–2000 characters, trimmed) or
 *   a JSON object (at most 16 KiB as canonical JSON), kept as given (object keys sorted). The service
 *   does not interpret them; `consent_duration` is the machine-readable term.
 * - `consent_duration` must be a non-zero ISO 8601 duration (integer components; see parseIsoDuration).
 * - A data field given as a string is `{key, label: key, required: false, sensitive: false}`.
 * - A step is any JSON object with a `type`; it is kept as given (object keys sorted).
 * - The `pattern` decides the session path only. An `informed` flow need not have an
 *   `informed`-mechanism purpose, and a `standard` flow may have one: the mechanism describes how the
 *   consent to a purpose is obtained and is recorded per purpose, the pattern how the session walks
 *   (disclosures then evidence, or sign-in, verification and review).
 * - `required: true` is refused for a consent purpose (consent cannot be a condition) and for a
 *   legitimate-interest purpose (the person may always object to it); only notice-only purposes
 *   (contract, legal obligation, vital interest, public task) can be required.
 */

export const FLOW_PATTERNS = ['standard', 'informed'] as const;
export type FlowPattern = (typeof FLOW_PATTERNS)[number];

export const LEGAL_BASES = [
  'consent',
  'legitimate_interest',
  'contract',
  'legal_obligation',
  'vital_interest',
  'public_task',
] as const;
export type LegalBasis = (typeof LEGAL_BASES)[number];

export const PURPOSE_MECHANISMS = ['explicit', 'informed', 'opt_out', 'notice'] as const;
export type PurposeMechanism = (typeof PURPOSE_MECHANISMS)[number];

/** Mechanisms each basis allows; the first is the default. */
export const MECHANISMS_BY_BASIS: Readonly<Record<LegalBasis, readonly PurposeMechanism[]>> = {
  consent: ['explicit', 'informed'],
  legitimate_interest: ['opt_out'],
  contract: ['notice'],
  legal_obligation: ['notice'],
  vital_interest: ['notice'],
  public_task: ['notice'],
};

/** Purpose and data-field keys: a lower-case letter, then up to 63 lower-case letters, digits or `_`. */
export const PURPOSE_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export const FLOW_LIMITS = {
  name: 200,
  title: 200,
  description: 5000,
  label: 200,
  purposeDescription: 2000,
  purposes: 100,
  dataFields: 100,
  steps: 20,
  stepType: 64,
  jurisdiction: 100,
  policyUrl: 2048,
  policyText: 2000,
  /** Longest canonical JSON of a policy object (retention, revocation_policy) or of one step. */
  jsonBytes: 16 * 1024,
} as const;

export const DEFAULT_FLOW_LOCALE = 'en';

export interface PurposeTerms {
  key: string;
  label: string;
  description: string | null;
  basis: LegalBasis;
  mechanism: PurposeMechanism;
  /** Only a notice-only purpose can be required (see the module notes). */
  required: boolean;
  /** The person makes a decision on it: consent (grant/decline) or legitimate interest (object). */
  takes_decision: boolean;
}

export interface DataFieldTerms {
  key: string;
  label: string;
  required: boolean;
  sensitive: boolean;
}

/** A step of the hosted experience: a JSON object with at least a `type`. */
export type FlowStep = JsonObject & { type: string };

/** Retention or revocation policy: free text, or a structured JSON object kept as given. */
export type FlowPolicy = string | JsonObject;

export interface FlowTerms {
  name: string;
  pattern: FlowPattern;
  title: string | null;
  description: string | null;
  locale: string;
  policy_url: string | null;
  jurisdiction: string | null;
  consent_duration: string | null;
  retention: FlowPolicy | null;
  revocation_policy: FlowPolicy | null;
  data_fields: DataFieldTerms[];
  steps: FlowStep[];
  /** In the order of the input `purposes` array. */
  purposes: PurposeTerms[];
}

export interface PurposeDefinitionInput {
  label?: string;
  description?: string | null;
  basis?: LegalBasis;
  mechanism?: PurposeMechanism;
  required?: boolean;
}

/** The request body shape (what normaliseFlowTerms accepts when valid). */
export interface FlowInput {
  name: string;
  pattern: FlowPattern;
  purposes: string[];
  purpose_definitions?: Record<string, PurposeDefinitionInput>;
  locale?: string | null;
  title?: string | null;
  description?: string | null;
  policy_url?: string | null;
  jurisdiction?: string | null;
  consent_duration?: string | null;
  retention?: FlowPolicy | null;
  revocation_policy?: FlowPolicy | null;
  data_fields?: Array<string | { key: string; label?: string; required?: boolean; sensitive?: boolean }> | null;
  steps?: FlowStep[] | null;
}

export const FLOW_INPUT_FIELDS = [
  'name',
  'pattern',
  'purposes',
  'purpose_definitions',
  'locale',
  'title',
  'description',
  'policy_url',
  'jurisdiction',
  'consent_duration',
  'retention',
  'revocation_policy',
  'data_fields',
  'steps',
] as const;

const PURPOSE_DEFINITION_FIELDS = ['label', 'description', 'basis', 'mechanism', 'required'];
const DATA_FIELD_FIELDS = ['key', 'label', 'required', 'sensitive'];

const has = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const isAbsent = (value: unknown) => value === undefined || value === null;

/**
 * `en`, `de`, `en-GB`, `zh-Hant`, `zh-Hant-TW`, `es-419`: a language (2–3 letters), an optional
 * script (4 letters) and an optional region (2 letters or 3 digits), any case.
 */
const LOCALE = /^([a-zA-Z]{2,3})(?:-([a-zA-Z]{4}))?(?:-([a-zA-Z]{2}|\d{3}))?$/;

/** A BCP 47 tag of the accepted shape in its usual case (`en-gb` → `en-GB`), or null. */
export function normaliseLocale(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = LOCALE.exec(value.trim());
  if (!match) return null;
  const [, language, script, region] = match;
  return [
    language.toLowerCase(),
    script && script[0].toUpperCase() + script.slice(1).toLowerCase(),
    region && region.toUpperCase(),
  ]
    .filter(Boolean)
    .join('-');
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * Why `value` is not an acceptable policy URL, or null when it is: an absolute `https` URL (`http`
 * only for `localhost` and `127.0.0.1`), without user name or password, at most 2048 characters.
 */
export function policyUrlProblem(value: unknown): string | null {
  const reason = 'must be an absolute https URL (http only for localhost or 127.0.0.1)';
  if (typeof value !== 'string' || value.length === 0) return reason;
  if (value.length > FLOW_LIMITS.policyUrl) return `must be at most ${FLOW_LIMITS.policyUrl} characters`;
  if (value.trim() !== value || /\s/.test(value)) return reason;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return reason;
  }
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.protocol === 'https:' && url.hostname) return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return reason;
}

class Issues {
  readonly list: FieldIssue[] = [];
  add(field: string, reason: string): void {
    this.list.push({ field, reason });
  }
}

function text(
  issues: Issues,
  field: string,
  value: unknown,
  { max, allowEmpty }: { max: number; allowEmpty: boolean },
): string | null | undefined {
  if (typeof value !== 'string') {
    issues.add(field, 'must be a string');
    return undefined;
  }
  const trimmed = value.trim();
  if (trimmed.length === 0) {
    if (allowEmpty) return null;
    issues.add(field, `must be 1 to ${max} characters`);
    return undefined;
  }
  if (trimmed.length > max) {
    issues.add(field, allowEmpty ? `must be at most ${max} characters` : `must be 1 to ${max} characters`);
    return undefined;
  }
  return trimmed;
}

/** A JSON copy of `value` with sorted keys, or a reason why it cannot be kept. */
function jsonCopy(value: unknown): { value: JsonValue } | { reason: string } {
  let serialised: string;
  try {
    serialised = canonicalJson(value);
  } catch {
    return { reason: 'must be plain JSON' };
  }
  if (Buffer.byteLength(serialised, 'utf8') > FLOW_LIMITS.jsonBytes) {
    return { reason: `must be at most ${FLOW_LIMITS.jsonBytes / 1024} KiB as JSON` };
  }
  return { value: JSON.parse(serialised) as JsonValue };
}

function policy(issues: Issues, field: string, value: unknown): FlowPolicy | null {
  if (isAbsent(value)) return null;
  if (typeof value === 'string') {
    return text(issues, field, value, { max: FLOW_LIMITS.policyText, allowEmpty: false }) ?? null;
  }
  if (isRecord(value)) {
    const copy = jsonCopy(value);
    if ('reason' in copy) {
      issues.add(field, copy.reason);
      return null;
    }
    return copy.value as JsonObject;
  }
  issues.add(field, 'must be a string or an object');
  return null;
}

function refuseUnknown(issues: Issues, prefix: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) issues.add(prefix ? `${prefix}.${key}` : key, 'is not a known field');
  }
}

function purposeKeys(issues: Issues, value: unknown): string[] {
  const reason = 'must be a non-empty array of purpose keys';
  if (!Array.isArray(value) || value.length === 0) {
    issues.add('purposes', reason);
    return [];
  }
  if (value.length > FLOW_LIMITS.purposes) {
    issues.add('purposes', `must have at most ${FLOW_LIMITS.purposes} purposes`);
    return [];
  }
  const keys: string[] = [];
  const firstAt = new Map<string, number>();
  value.forEach((key, index) => {
    if (typeof key !== 'string' || !PURPOSE_KEY_PATTERN.test(key)) {
      issues.add(`purposes[${index}]`, 'must be a purpose key: a lower-case letter, then up to 63 lower-case letters, digits or _');
      return;
    }
    if (firstAt.has(key)) {
      issues.add(`purposes[${index}]`, `duplicates purposes[${firstAt.get(key)}]`);
      return;
    }
    firstAt.set(key, index);
    keys.push(key);
  });
  return keys;
}

function purposeTerms(issues: Issues, key: string, definition: unknown): PurposeTerms | null {
  const prefix = `purpose_definitions.${key}`;
  const defaults: PurposeTerms = {
    key,
    label: key,
    description: null,
    basis: 'consent',
    mechanism: 'explicit',
    required: false,
    takes_decision: true,
  };
  if (isAbsent(definition)) return defaults;
  if (!isRecord(definition)) {
    issues.add(prefix, 'must be an object');
    return null;
  }
  refuseUnknown(issues, prefix, definition, PURPOSE_DEFINITION_FIELDS);
  const before = issues.list.length;

  let label = key;
  if (!isAbsent(definition.label)) {
    label = text(issues, `${prefix}.label`, definition.label, { max: FLOW_LIMITS.label, allowEmpty: false }) ?? key;
  }
  let description: string | null = null;
  if (!isAbsent(definition.description)) {
    description =
      text(issues, `${prefix}.description`, definition.description, {
        max: FLOW_LIMITS.purposeDescription,
        allowEmpty: true,
      }) ?? null;
  }

  let basis: LegalBasis | null = 'consent';
  if (!isAbsent(definition.basis)) {
    if ((LEGAL_BASES as readonly unknown[]).includes(definition.basis)) basis = definition.basis as LegalBasis;
    else {
      issues.add(`${prefix}.basis`, `must be one of ${LEGAL_BASES.join(', ')}`);
      basis = null;
    }
  }

  let mechanism: PurposeMechanism = 'explicit';
  if (basis !== null) {
    const allowed = MECHANISMS_BY_BASIS[basis];
    mechanism = allowed[0];
    if (!isAbsent(definition.mechanism)) {
      if (allowed.includes(definition.mechanism as PurposeMechanism)) mechanism = definition.mechanism as PurposeMechanism;
      else {
        issues.add(
          `${prefix}.mechanism`,
          allowed.length === 1
            ? `must be ${allowed[0]} for basis ${basis}`
            : `must be one of ${allowed.join(', ')} for basis ${basis}`,
        );
      }
    }
  }

  let required = false;
  if (!isAbsent(definition.required)) {
    if (typeof definition.required !== 'boolean') issues.add(`${prefix}.required`, 'must be a boolean');
    else if (definition.required && basis === 'consent') {
      issues.add(`${prefix}.required`, 'a consent purpose cannot be required: consent cannot be a condition');
    } else if (definition.required && basis === 'legitimate_interest') {
      issues.add(`${prefix}.required`, 'a legitimate-interest purpose cannot be required: the person may always object');
    } else required = definition.required;
  }

  if (issues.list.length > before || basis === null) return null;
  return {
    key,
    label,
    description,
    basis,
    mechanism,
    required,
    takes_decision: basis === 'consent' || basis === 'legitimate_interest',
  };
}

function dataFields(issues: Issues, value: unknown): DataFieldTerms[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) {
    issues.add('data_fields', 'must be an array of field keys or {key, label?, required?, sensitive?} objects');
    return [];
  }
  if (value.length > FLOW_LIMITS.dataFields) {
    issues.add('data_fields', `must have at most ${FLOW_LIMITS.dataFields} fields`);
    return [];
  }
  const fields: DataFieldTerms[] = [];
  const firstAt = new Map<string, number>();
  value.forEach((item, index) => {
    const at = `data_fields[${index}]`;
    const keyReason = 'must be a field key: a lower-case letter, then up to 63 lower-case letters, digits or _';
    let field: DataFieldTerms | null = null;
    if (typeof item === 'string') {
      if (PURPOSE_KEY_PATTERN.test(item)) field = { key: item, label: item, required: false, sensitive: false };
      else issues.add(at, keyReason);
    } else if (isRecord(item)) {
      const before = issues.list.length;
      refuseUnknown(issues, at, item, DATA_FIELD_FIELDS);
      const key = item.key;
      if (typeof key !== 'string' || !PURPOSE_KEY_PATTERN.test(key)) issues.add(`${at}.key`, keyReason);
      let label = typeof key === 'string' ? key : '';
      if (!isAbsent(item.label)) label = text(issues, `${at}.label`, item.label, { max: FLOW_LIMITS.label, allowEmpty: false }) ?? label;
      for (const flag of ['required', 'sensitive'] as const) {
        if (!isAbsent(item[flag]) && typeof item[flag] !== 'boolean') issues.add(`${at}.${flag}`, 'must be a boolean');
      }
      if (issues.list.length === before) {
        field = { key: key as string, label, required: item.required === true, sensitive: item.sensitive === true };
      }
    } else {
      issues.add(at, 'must be a field key or a {key, label?, required?, sensitive?} object');
    }
    if (!field) return;
    if (firstAt.has(field.key)) {
      issues.add(at, `duplicates data_fields[${firstAt.get(field.key)}]`);
      return;
    }
    firstAt.set(field.key, index);
    fields.push(field);
  });
  return fields;
}

function steps(issues: Issues, value: unknown): FlowStep[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) {
    issues.add('steps', 'must be an array of step objects');
    return [];
  }
  if (value.length > FLOW_LIMITS.steps) {
    issues.add('steps', `must have at most ${FLOW_LIMITS.steps} steps`);
    return [];
  }
  const result: FlowStep[] = [];
  value.forEach((step, index) => {
    const at = `steps[${index}]`;
    if (!isRecord(step)) {
      issues.add(at, 'must be an object with a type');
      return;
    }
    const type = step.type;
    if (typeof type !== 'string' || type.trim().length === 0 || type.length > FLOW_LIMITS.stepType) {
      issues.add(`${at}.type`, `must be a string of 1 to ${FLOW_LIMITS.stepType} characters`);
      return;
    }
    const copy = jsonCopy(step);
    if ('reason' in copy) {
      issues.add(at, copy.reason);
      return;
    }
    result.push(copy.value as FlowStep);
  });
  return result;
}

/**
 * Validates and normalises a flow's terms. Every problem is reported at once: one
 * `DomainError('validation_failed', 'The flow is not valid', details)` whose details name each field
 * by its path (`name`, `purposes[2]`, `purpose_definitions.marketing.basis`, `data_fields[1].key`,
 * `steps[0].type`, `policy_url`, ...). Absent optional scalars become null, absent arrays [] and an
 * absent locale `en`. See the module notes for the choices made.
 */
export function normaliseFlowTerms(input: unknown): FlowTerms {
  const issues = new Issues();
  if (!isRecord(input)) {
    throw new DomainError('validation_failed', 'The flow is not valid', [{ field: 'body', reason: 'must be a JSON object' }]);
  }
  refuseUnknown(issues, '', input, FLOW_INPUT_FIELDS);

  const name = text(issues, 'name', input.name, { max: FLOW_LIMITS.name, allowEmpty: false });

  let pattern: FlowPattern | undefined;
  if ((FLOW_PATTERNS as readonly unknown[]).includes(input.pattern)) pattern = input.pattern as FlowPattern;
  else issues.add('pattern', `must be one of ${FLOW_PATTERNS.join(', ')}`);

  const keys = purposeKeys(issues, input.purposes);

  let definitions: Record<string, unknown> = {};
  if (!isAbsent(input.purpose_definitions)) {
    if (isRecord(input.purpose_definitions)) definitions = input.purpose_definitions;
    else issues.add('purpose_definitions', 'must be an object of purpose key to definition');
  }
  if (Array.isArray(input.purposes)) {
    const declared = new Set<unknown>(input.purposes);
    for (const key of Object.keys(definitions)) {
      if (!declared.has(key)) issues.add(`purpose_definitions.${key}`, 'is not one of the purposes');
    }
  }
  const purposes: PurposeTerms[] = [];
  for (const key of keys) {
    const terms = purposeTerms(issues, key, has(definitions, key) ? definitions[key] : undefined);
    if (terms) purposes.push(terms);
  }

  let locale = DEFAULT_FLOW_LOCALE;
  if (!isAbsent(input.locale)) {
    const normalised = normaliseLocale(input.locale);
    if (normalised) locale = normalised;
    else issues.add('locale', 'must be a language tag such as en, de or en-GB');
  }

  const optionalText = (field: 'title' | 'description' | 'jurisdiction', max: number, allowEmpty: boolean) =>
    isAbsent(input[field]) ? null : (text(issues, field, input[field], { max, allowEmpty }) ?? null);
  const title = optionalText('title', FLOW_LIMITS.title, true);
  const description = optionalText('description', FLOW_LIMITS.description, true);
  const jurisdiction = optionalText('jurisdiction', FLOW_LIMITS.jurisdiction, false);

  let policyUrl: string | null = null;
  if (!isAbsent(input.policy_url)) {
    const problem = policyUrlProblem(input.policy_url);
    if (problem) issues.add('policy_url', problem);
    else policyUrl = input.policy_url as string;
  }

  let consentDuration: string | null = null;
  if (!isAbsent(input.consent_duration)) {
    const parsed = parseIsoDuration(input.consent_duration);
    if (!parsed) issues.add('consent_duration', 'must be an ISO 8601 duration such as P1Y, P6M, P30D or PT12H');
    else if (isZeroDuration(parsed)) issues.add('consent_duration', 'must be longer than zero');
    else consentDuration = input.consent_duration as string;
  }

  const retention = policy(issues, 'retention', input.retention);
  const revocationPolicy = policy(issues, 'revocation_policy', input.revocation_policy);
  const fields = dataFields(issues, input.data_fields);
  const flowSteps = steps(issues, input.steps);

  if (issues.list.length > 0) throw new DomainError('validation_failed', 'The flow is not valid', issues.list);
  return {
    name: name as string,
    pattern: pattern as FlowPattern,
    title,
    description,
    locale,
    policy_url: policyUrl,
    jurisdiction,
    consent_duration: consentDuration,
    retention,
    revocation_policy: revocationPolicy,
    data_fields: fields,
    steps: flowSteps,
    purposes,
  };
}

/**
 * The request body that normalises back to `terms` (`normaliseFlowTerms(flowInputOf(t))` equals `t`):
 * every purpose with its full definition, null scalars left out. A PATCH applies its changes with
 * `normaliseFlowTerms({...flowInputOf(current), ...changes})`.
 */
export function flowInputOf(terms: FlowTerms): FlowInput {
  const input: FlowInput = {
    name: terms.name,
    pattern: terms.pattern,
    purposes: terms.purposes.map((purpose) => purpose.key),
    purpose_definitions: Object.fromEntries(
      terms.purposes.map((purpose) => [
        purpose.key,
        {
          label: purpose.label,
          ...(purpose.description !== null && { description: purpose.description }),
          basis: purpose.basis,
          mechanism: purpose.mechanism,
          required: purpose.required,
        },
      ]),
    ),
    locale: terms.locale,
  };
  for (const field of ['title', 'description', 'policy_url', 'jurisdiction', 'consent_duration', 'retention', 'revocation_policy'] as const) {
    if (terms[field] !== null) (input as unknown as Record<string, unknown>)[field] = terms[field];
  }
  if (terms.data_fields.length > 0) input.data_fields = terms.data_fields.map((field) => ({ ...field }));
  if (terms.steps.length > 0) input.steps = terms.steps;
  return input;
}
