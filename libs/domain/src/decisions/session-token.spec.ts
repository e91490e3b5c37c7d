import { countryOfSessionToken, isSessionToken, newSessionTokenNonce, sessionTokenFor, sessionTokenKey } from './session-token';

describe('session tokens', () => {
  const key = sessionTokenKey('k'.repeat(32), 'DE');

  it('carry the home country and 30 characters derived from the session nonce', () => {
    const nonce = newSessionTokenNonce();
    const token = sessionTokenFor(key, 'DE', nonce);
    expect(token).toMatch(/^dts_de[0-9a-z]{30}$/);
    expect(isSessionToken(token)).toBe(true);
    expect(countryOfSessionToken(token)).toBe('DE');
    // Derived again, the same token; another nonce, another token.
    expect(sessionTokenFor(sessionTokenKey('k'.repeat(32), 'DE'), 'DE', nonce)).toBe(token);
    expect(sessionTokenFor(key, 'DE', newSessionTokenNonce())).not.toBe(token);
    expect(newSessionTokenNonce()).not.toBe(nonce);
  });

  it('depend on the key: another SUBJECT_REF_KEY or country derives other tokens', () => {
    const nonce = newSessionTokenNonce();
    const token = sessionTokenFor(key, 'DE', nonce);
    expect(sessionTokenFor(sessionTokenKey('j'.repeat(32), 'DE'), 'DE', nonce)).not.toBe(token);
    expect(sessionTokenFor(sessionTokenKey('k'.repeat(32), 'US'), 'US', nonce).slice(6)).not.toBe(token.slice(6));
  });

  it('spread over the whole alphabet, every position', () => {
    const seen = Array.from({ length: 30 }, () => new Set<string>());
    for (let i = 0; i < 2000; i++) {
      const token = sessionTokenFor(key, 'DE', newSessionTokenNonce());
      for (let p = 0; p < 30; p++) seen[p].add(token[6 + p]);
    }
    expect(seen.map((characters) => characters.size)).toEqual(seen.map(() => 36));
  });

  it('refuse anything else', () => {
    expect(countryOfSessionToken('dts_de123')).toBeUndefined();
    expect(countryOfSessionToken(`dts_DE${'a'.repeat(30)}`)).toBeUndefined();
    expect(isSessionToken(`xts_de${'a'.repeat(30)}`)).toBe(false);
    expect(isSessionToken(42)).toBe(false);
    expect(() => sessionTokenKey('k'.repeat(32), 'DEU')).toThrow(RangeError);
    expect(() => sessionTokenFor(key, 'DEU', 'n')).toThrow(RangeError);
    expect(() => sessionTokenFor(key, 'DE', '')).toThrow(RangeError);
  });
});
