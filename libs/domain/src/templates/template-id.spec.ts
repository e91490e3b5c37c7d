import { countryOfTemplateId, isTemplateId, newTemplateId } from './template-id';

describe('template ids', () => {
  it('carry the home country and 20 random characters', () => {
    const id = newTemplateId('DE');
    expect(id).toMatch(/^tpl_de[0-9a-z]{20}$/);
    expect(isTemplateId(id)).toBe(true);
    expect(countryOfTemplateId(id)).toBe('DE');
    expect(newTemplateId('us')).toMatch(/^tpl_us[0-9a-z]{20}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newTemplateId('US'))).size).toBe(1000);
  });

  it.each(['tpl_welcome', 'tpl_US0123456789abcdefghij', 'tpl_us0123456789abcdefghi', 'tpl_us0123456789abcdefghijk', 'fcn_us0123456789abcdefghij', ' tpl_us0123456789abcdefghij'])(
    'refuse %j',
    (id) => {
      expect(isTemplateId(id)).toBe(false);
      expect(countryOfTemplateId(id)).toBeUndefined();
    },
  );

  it('refuse non-strings and a country that is not two letters', () => {
    for (const value of [undefined, null, 42, {}, ['tpl_us0123456789abcdefghij']]) expect(isTemplateId(value)).toBe(false);
    expect(() => newTemplateId('USA')).toThrow(RangeError);
    expect(() => newTemplateId('1A')).toThrow(RangeError);
  });
});
