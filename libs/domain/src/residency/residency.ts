import { createHmac } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { DomainError } from '../errors';
import { countryOfSubjectId } from '../identifiers';

export type SubjectReferenceKind = 'external_id' | 'email' | 'subject_id';

/** Shortest key accepted for subject references (the `SUBJECT_REF_KEY` setting has the same floor). */
export const MIN_SUBJECT_REFERENCE_KEY_LENGTH = 32;
/** Bumped if the encoding ever changes, so old and new references can never collide. */
const SUBJECT_REFERENCE_DOMAIN = 'dcr.subject-reference.v1';

const FIELD_OF_KIND: Record<SubjectReferenceKind, string> = {
  external_id: 'subject.external_id',
  email: 'subject.email',
  subject_id: 'subject.id',
};

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * An e-mail address as the service keeps and compares it: trimmed and lower-cased, and an address
 * with letters outside ASCII also in Unicode's composed form (NFC: "é" typed as e plus a combining
 * accent is the same person as "é") with its domain in the DNS's ASCII form (IDNA: `bücher.de` is
 * `xn--bcher-kva.de`, as allowed origins keep it). A domain IDNA refuses is kept as written.
 */
export function normaliseEmail(email: string): string {
  const trimmed = email.trim().toLowerCase();
  if (ASCII_ONLY.test(trimmed)) return trimmed;
  const composed = trimmed.normalize('NFC');
  const at = composed.lastIndexOf('@');
  if (at < 0) return composed;
  const domain = domainToASCII(composed.slice(at + 1));
  return domain === '' ? composed : `${composed.slice(0, at + 1)}${domain}`;
}

/**
 * Why a person's e-mail address or external id cannot be kept as given (undefined when it can): a
 * control character (PostgreSQL text holds no NUL, and none belongs in an identifier) or an unpaired
 * surrogate (not Unicode text: it would be kept as U+FFFD, another identifier than the one given).
 */
export function subjectTextProblem(value: string): string | undefined {
  if (/\p{Cc}/u.test(value)) return 'must not contain control characters';
  if (/\p{Cs}/u.test(value)) return 'must be Unicode text (it holds an unpaired surrogate)';
  return undefined;
}

/** The longest e-mail address, in UTF-16 code units (as validator.js's isEmail counts; characters, for any address outside the astral planes). */
export const MAX_EMAIL_LENGTH = 254;
/** The most bytes (UTF-8) before an e-mail address's last `@`, as validator.js's isEmail counts them (RFC 5321's local-part limit). */
export const MAX_EMAIL_LOCAL_PART_BYTES = 64;

/**
 * Why a value cannot be a person's e-mail address (undefined when it can), one rule for every entry
 * point that names a person (the Record API, captures, imports, form builders, consent_status, the
 * subjects endpoint, decision sessions): text that can be kept (subjectTextProblem), then the two
 * limits by name, then the shape (`isEmailAddress`: validator.js's isEmail at the entry points, which
 * this lib does not depend on), so a refusal says which limit an address is over rather than only
 * that it is not an address. The value is checked as sent: spaces around it fail the shape.
 */
export function emailProblem(value: unknown, isEmailAddress: (value: string) => boolean): string | undefined {
  if (typeof value !== 'string') return 'must be an e-mail address';
  const problem = subjectTextProblem(value);
  if (problem) return problem;
  if (value.length > MAX_EMAIL_LENGTH) return `must be at most ${MAX_EMAIL_LENGTH} characters (an e-mail address limit)`;
  const at = value.lastIndexOf('@');
  if (at >= 0 && Buffer.byteLength(value.slice(0, at), 'utf8') > MAX_EMAIL_LOCAL_PART_BYTES) {
    return `must have at most ${MAX_EMAIL_LOCAL_PART_BYTES} bytes before the @ (an e-mail address limit)`;
  }
  if (!isEmailAddress(value)) return 'must be an e-mail address';
  return undefined;
}

/** The longest external id, in characters (code points, as JSON Schema's `maxLength` counts), without the spaces around it. */
export const MAX_EXTERNAL_ID_LENGTH = 200;

/** An external id as the service keeps and compares it: without the spaces around it. */
export function normaliseExternalId(value: string): string {
  return value.trim();
}

/**
 * Why a value cannot be a person's external id (undefined when it can), one rule for every entry
 * point (the Record API, captures, imports, form builders, consent_status), so an id one of them
 * records is one the others take: text that can be kept as given (subjectTextProblem, checked on the
 * value as sent: a tab is refused, not trimmed away), not blank, and at most
 * MAX_EXTERNAL_ID_LENGTH characters once the spaces around it are dropped.
 */
export function externalIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  const problem = subjectTextProblem(value);
  if (problem) return problem;
  const kept = normaliseExternalId(value);
  if (kept.length === 0) return 'must not be blank';
  if ([...kept].length > MAX_EXTERNAL_ID_LENGTH) return `must be at most ${MAX_EXTERNAL_ID_LENGTH} characters (without the spaces around it)`;
  return undefined;
}

/** The value as it is hashed: e-mail addresses normalised, other kinds exactly as given. */
export function normaliseSubjectValue(kind: SubjectReferenceKind, value: string): string {
  return kind === 'email' ? normaliseEmail(value) : value;
}

/**
 * The opaque reference to a person: lower-case hex HMAC-SHA256, keyed with `key` (its UTF-8 bytes),
 * over the JSON array `["dcr.subject-reference.v1", applicationId, kind, normalisedValue]`. JSON
 * string escaping makes the encoding injective, so no two distinct triples share an input.
 *
 * This is the only form in which a person reference may cross a border: the cross-border directory
 * stores it with the home country and a status, never the e-mail or external id. The same person
 * under two applications gets unrelated references.
 */
export function subjectReference(key: string, applicationId: string, kind: SubjectReferenceKind, value: string): string {
  if (typeof key !== 'string' || key.length < MIN_SUBJECT_REFERENCE_KEY_LENGTH) {
    throw new RangeError(`the subject reference key must be at least ${MIN_SUBJECT_REFERENCE_KEY_LENGTH} characters`);
  }
  if (typeof applicationId !== 'string' || applicationId.length === 0) {
    throw new RangeError('subjectReference needs an application id');
  }
  if (!Object.prototype.hasOwnProperty.call(FIELD_OF_KIND, kind)) {
    throw new RangeError(`unknown subject reference kind ${String(kind)}`);
  }
  const normalised = typeof value === 'string' ? normaliseSubjectValue(kind, value) : '';
  if (normalised.length === 0) {
    throw new DomainError('validation_failed', 'The subject is not valid', [
      { field: FIELD_OF_KIND[kind], reason: 'must be a non-empty string' },
    ]);
  }
  const message = JSON.stringify([SUBJECT_REFERENCE_DOMAIN, applicationId, kind, normalised]);
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(message, 'utf8').digest('hex');
}

/**
 * An e-mail address as the inbox's sign-in codes keep it: lower-case hex HMAC-SHA256 keyed with the
 * subject reference key over `["dcr.inbox-address.v1", normalisedAddress]`. The inbox spans
 * organisations, so the address cannot be routed to its home; the code is found again by the
 * address a person types, and the address itself is not kept (a keyed hash, as the directory keeps
 * people).
 */
export function inboxAddressDigest(key: string, email: string): string {
  return createHmac('sha256', Buffer.from(key, 'utf8'))
    .update(JSON.stringify(['dcr.inbox-address.v1', normaliseEmail(email)]), 'utf8')
    .digest('hex');
}

/** An ISO 3166-1 alpha-2 shaped code: exactly two upper-case ASCII letters (`US`, `DE`). */
export function isCountryCode(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z]{2}$/.test(value);
}

/**
 * `us`, ` De ` → `US`, `DE`: trimmed and upper-cased; undefined when the result is not two letters.
 * The NATS subject prefix is the lower-case form of the same code.
 */
export function normaliseCountry(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const code = value.trim().toUpperCase();
  return isCountryCode(code) ? code : undefined;
}

/**
 * The home country of a subject-addressed request: the directory's entry for its reference when
 * there is one (`entryHome`); else, for a person's id, the country the id names (newSubjectId) when
 * it is one of the deployment's `countries`; else none (an unknown person, a plain 404). The entry
 * comes first because ids made before ids named their country are random, and may read as a
 * country's code by chance; their entries answer for them.
 */
export function homeOfSubject(entryHome: string | undefined, kind: SubjectReferenceKind, value: string, countries: readonly string[]): string | undefined {
  if (entryHome !== undefined) return entryHome;
  if (kind !== 'subject_id') return undefined;
  const named = countryOfSubjectId(value);
  return named !== undefined && countries.includes(named) ? named : undefined;
}

/** A country's claim of a directory reference: where it homed it, and when. */
export interface HomeClaim {
  homeCountry: string;
  recordedAt: Date;
}

/**
 * The directory's rule between two claims of one reference: the earlier record wins, and of two
 * made at the same moment the lower country code, so every country comparing the same two claims
 * keeps the same one (the residency-router's merge statement applies the same rule in SQL).
 */
export function claimPrecedes(a: HomeClaim, b: HomeClaim): boolean {
  const [at, bt] = [a.recordedAt.getTime(), b.recordedAt.getTime()];
  return at < bt || (at === bt && a.homeCountry < b.homeCountry);
}
