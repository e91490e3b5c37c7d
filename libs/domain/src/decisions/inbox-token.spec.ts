import { countryOfInboxToken, isInboxToken, newInboxToken } from './inbox-token';

describe('inbox tokens', () => {
  it('name their home country before 43 random base64url characters', () => {
    const token = newInboxToken('DE');
    expect(token).toMatch(/^inb_de[A-Za-z0-9_-]{43}$/);
    expect(isInboxToken(token)).toBe(true);
    expect(countryOfInboxToken(token)).toBe('DE');
    expect(countryOfInboxToken(newInboxToken('us'))).toBe('US');
    expect(newInboxToken('DE')).not.toBe(token);
  });

  it('take the form from before tokens named their country, naming none, even when it starts with two small letters', () => {
    const before = `inb_de${'A'.repeat(41)}`;
    expect(isInboxToken(before)).toBe(true);
    expect(countryOfInboxToken(before)).toBeUndefined();
  });

  it('refuse anything else', () => {
    for (const value of [`inb_DE${'A'.repeat(43)}`, `inb_de${'A'.repeat(42)}`, `inb_${'A'.repeat(44)}`, `inb_de${'A'.repeat(42)}=`, `dts_de${'a'.repeat(30)}`, 42, undefined]) {
      expect([value, isInboxToken(value), countryOfInboxToken(value)]).toEqual([value, false, undefined]);
    }
    expect(() => newInboxToken('DEU')).toThrow(RangeError);
  });
});
