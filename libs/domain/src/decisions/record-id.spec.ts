import { countryOfRecordId, isRecordId, newRecordId } from './record-id';

describe('record ids', () => {
  it('carry the home country and 20 random characters', () => {
    const id = newRecordId('DE');
    expect(id).toMatch(/^rec_de[0-9a-z]{20}$/);
    expect(isRecordId(id)).toBe(true);
    expect(countryOfRecordId(id)).toBe('DE');
    expect(newRecordId('de')).not.toBe(newRecordId('de'));
  });

  it('refuse what is not one', () => {
    expect(() => newRecordId('DEU')).toThrow(RangeError);
    for (const value of ['rec_0123456789abcdefghij', 'rec_DE0123456789abcdefghij', 'rec_de0123', 42, null]) {
      expect(isRecordId(value)).toBe(false);
      expect(countryOfRecordId(value)).toBeUndefined();
    }
  });
});
