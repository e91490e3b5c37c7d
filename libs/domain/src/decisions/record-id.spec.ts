import { countryOfImportId, countryOfRecordId, isImportId, isRecordId, newImportId, newRecordId } from './record-id';

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

describe('import ids', () => {
  it('name the country that keeps the report; older ids name none and are still ids', () => {
    const id = newImportId('US');
    expect(id).toMatch(/^imp_us[0-9a-z]{20}$/);
    expect([isImportId(id), countryOfImportId(id)]).toEqual([true, 'US']);
    const older = 'imp_0123456789abcdefghij';
    expect([isImportId(older), countryOfImportId(older)]).toEqual([true, undefined]);
    for (const bad of ['imp_us012', 'rec_us0123456789abcdefghij', 42]) expect([bad, isImportId(bad)]).toEqual([bad, false]);
  });
});
