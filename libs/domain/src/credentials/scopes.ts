import { DomainError, FieldIssue, validationFailed } from '../errors';

/**
 * Every scope an API token can hold. The specification names `audit:verify` (read authorization
 * receipts) and `disclosures:write` (record declared agent disclosures); the account scopes are ours.
 */
export const API_TOKEN_SCOPES = [
  'applications:read',
  'applications:write',
  'flows:read',
  'flows:write',
  'decisions:read',
  'decisions:write',
  'records:read',
  'records:write',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
  'audit:verify',
  'disclosures:write',
] as const;

export type ApiTokenScope = (typeof API_TOKEN_SCOPES)[number];

/** What a token gets when it is created without `scopes`: everything (API tokens are account-level). */
export const DEFAULT_API_TOKEN_SCOPES: readonly ApiTokenScope[] = API_TOKEN_SCOPES;

const KNOWN: ReadonlySet<string> = new Set(API_TOKEN_SCOPES);

export function isApiTokenScope(value: unknown): value is ApiTokenScope {
  return typeof value === 'string' && KNOWN.has(value);
}

/**
 * The scopes of a token being created, checked. `undefined` (field omitted) means the defaults.
 * Anything else must be a non-empty array of distinct known scope strings; every problem is
 * reported (one `{field: 'scopes', reason}` each) in a single `validation_failed` error.
 * The answer keeps the caller's order.
 */
export function validateScopes(scopes: unknown): string[] {
  if (scopes === undefined) return [...DEFAULT_API_TOKEN_SCOPES];
  if (!Array.isArray(scopes)) {
    throw validationFailed([{ field: 'scopes', reason: 'scopes must be an array of scope strings' }]);
  }
  if (scopes.length === 0) {
    throw validationFailed([{ field: 'scopes', reason: 'at least one scope is required' }]);
  }
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  scopes.forEach((scope: unknown, index) => {
    if (typeof scope !== 'string') {
      issues.push({ field: 'scopes', reason: `scope at index ${index} is not a string` });
    } else if (!KNOWN.has(scope)) {
      issues.push({ field: 'scopes', reason: `unknown scope ${shorten(scope)}` });
    } else if (seen.has(scope)) {
      issues.push({ field: 'scopes', reason: `duplicate scope ${scope}` });
    } else {
      seen.add(scope);
    }
  });
  if (issues.length > 0) throw validationFailed(issues, 'The scopes are not valid');
  return [...(scopes as string[])];
}

/** Echo at most 64 characters of a caller's value back in a reason. */
const shorten = (value: string): string => (value.length > 64 ? `${value.slice(0, 64)}…` : value);

/**
 * The scopes a new token gets from the credential that creates it: a token grants no more than it
 * holds (`holder`; undefined for the operator's admin token, which holds them all), so a token
 * narrowed to `applications:write` cannot mint one that reads webhooks. Without `scopes`, the
 * holder's own; with scopes it does not hold, `forbidden` naming each.
 */
export function grantedScopes(requested: unknown, holder: readonly string[] | undefined): string[] {
  if (requested === undefined) return holder === undefined ? [...DEFAULT_API_TOKEN_SCOPES] : API_TOKEN_SCOPES.filter((scope) => holder.includes(scope));
  const scopes = validateScopes(requested);
  const beyond = holder === undefined ? [] : scopes.filter((scope) => !holder.includes(scope));
  if (beyond.length > 0) {
    throw new DomainError(
      'forbidden',
      `This API token lacks the scope${beyond.length > 1 ? 's' : ''} ${beyond.join(', ')}, so it cannot grant ${beyond.length > 1 ? 'them' : 'it'}`,
      beyond.map((scope) => ({ field: 'scopes', reason: `${scope} is not a scope of the token creating it` })),
    );
  }
  return scopes;
}
