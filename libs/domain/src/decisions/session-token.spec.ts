import { countryOfSessionToken, isSessionToken, newSessionToken } from './session-token';

describe('session tokens', () => {
  it('carry the home country and 30 random characters', () => {
    const token = newSessionToken('DE');
    expect(token).toMatch(/^dts_de[0-9a-z]{30}$/);
    expect(isSessionToken(token)).toBe(true);
    expect(countryOfSessionToken(token)).toBe('DE');
    expect(newSessionToken('DE')).not.toBe(token);
  });

  it('refuse anything else', () => {
    expect(countryOfSessionToken('dts_de123')).toBeUndefined();
    expect(countryOfSessionToken(`dts_DE${'a'.repeat(30)}`)).toBeUndefined();
    expect(isSessionToken(`xts_de${'a'.repeat(30)}`)).toBe(false);
    expect(isSessionToken(42)).toBe(false);
    expect(() => newSessionToken('DEU')).toThrow(RangeError);
  });
});
