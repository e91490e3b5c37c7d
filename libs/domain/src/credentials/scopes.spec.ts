import fc from 'fast-check';
import { DomainError } from '../errors';
import { API_TOKEN_SCOPES, DEFAULT_API_TOKEN_SCOPES, grantedScopes, isApiTokenScope, validateScopes } from './scopes';

function refusal(scopes: unknown): DomainError {
  try {
    validateScopes(scopes);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error(`validateScopes accepted ${JSON.stringify(scopes)}`);
}

describe('API token scopes', () => {
  it('include the two scopes the specification names and the account scopes', () => {
    expect(API_TOKEN_SCOPES).toEqual(expect.arrayContaining(['audit:verify', 'disclosures:write', 'applications:write', 'records:read']));
    expect(new Set(API_TOKEN_SCOPES).size).toBe(API_TOKEN_SCOPES.length);
    for (const scope of API_TOKEN_SCOPES) expect(scope).toMatch(/^[a-z_]+:(read|write|verify)$/);
  });

  it('default to all of them', () => {
    expect([...DEFAULT_API_TOKEN_SCOPES].sort()).toEqual([...API_TOKEN_SCOPES].sort());
    expect(validateScopes(undefined)).toEqual([...API_TOKEN_SCOPES]);
  });

  it('accept any non-empty subset of distinct known scopes, keeping the order and returning a copy', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([...API_TOKEN_SCOPES], { minLength: 1 }), (subset) => {
        const result = validateScopes(subset);
        expect(result).toEqual(subset);
        expect(result).not.toBe(subset);
      }),
    );
  });

  it('name an unknown scope', () => {
    const error = refusal(['flows:read', 'admin']);
    expect(error.code).toBe('validation_failed');
    expect(error.details).toEqual([{ field: 'scopes', reason: 'unknown scope admin' }]);
  });

  it('name a duplicate, a non-string and every other problem at once', () => {
    const error = refusal(['flows:read', 'flows:read', 7, 'openid']);
    expect(error.details).toEqual([
      { field: 'scopes', reason: 'duplicate scope flows:read' },
      { field: 'scopes', reason: 'scope at index 2 is not a string' },
      { field: 'scopes', reason: 'unknown scope openid' },
    ]);
  });

  it.each([[null], ['flows:read'], [{}], [[]]])('refuse %j as scopes', (value) => {
    const error = refusal(value);
    expect(error.code).toBe('validation_failed');
    expect(error.details?.[0].field).toBe('scopes');
  });

  it('refuse anything that is not a known scope', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        fc.pre(!isApiTokenScope(value));
        expect(refusal([value]).code).toBe('validation_failed');
      }),
    );
  });
});

describe('grantedScopes', () => {
  it('grants, without scopes, what the creating token holds (the admin token: every scope), in the usual order', () => {
    expect(grantedScopes(undefined, undefined)).toEqual([...API_TOKEN_SCOPES]);
    expect(grantedScopes(undefined, ['webhooks:read', 'applications:write'])).toEqual(['applications:write', 'webhooks:read']);
  });

  it('grants a subset of what the creating token holds, and refuses with forbidden, naming each, a scope it lacks', () => {
    expect(grantedScopes(['applications:write'], ['applications:read', 'applications:write'])).toEqual(['applications:write']);
    let refused: unknown;
    try {
      grantedScopes(['applications:write', 'webhooks:read', 'audit:read'], ['applications:write']);
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      code: 'forbidden',
      details: [
        { field: 'scopes', reason: 'webhooks:read is not a scope of the token creating it' },
        { field: 'scopes', reason: 'audit:read is not a scope of the token creating it' },
      ],
    });
    // Malformed scopes are still a validation failure first.
    expect(() => grantedScopes(['nope'], ['applications:write'])).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });
});
