import { CLIENT_MESSAGE_KEYS, resolveLocale, translator } from './i18n';
import { de } from './messages/de';
import { en } from './messages/en';

const placeholders = (text: string) => (text.match(/\{[a-z_]+\}/g) ?? []).sort();

describe('message catalogues', () => {
  it('have identical keys in English and German', () => {
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
  });

  it('use the same placeholders per key and no empty text', () => {
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect([key, placeholders(de[key])]).toEqual([key, placeholders(en[key])]);
      expect(en[key].trim()).not.toBe('');
      expect(de[key].trim()).not.toBe('');
    }
  });

  it('hands only existing keys to the script', () => {
    for (const key of CLIENT_MESSAGE_KEYS) expect(en).toHaveProperty(key);
  });
});

describe('locale resolution', () => {
  it('picks the first supported language and falls back to English', () => {
    expect(resolveLocale('de-DE').language).toBe('de');
    expect(resolveLocale('de_AT').intl).toBe('de-AT');
    expect(resolveLocale('fr-FR').language).toBe('en');
    expect(resolveLocale(undefined, null, '').language).toBe('en');
    expect(resolveLocale('fr', 'de').language).toBe('de');
    expect(resolveLocale('fr-CH, de;q=0.5, en;q=0.9').language).toBe('en');
    expect(resolveLocale('*').language).toBe('en');
  });
});

describe('formatting', () => {
  it('formats minor-unit money per currency and locale', () => {
    expect(translator('en').money({ amount: 1234550, currency: 'EUR' })).toBe('€12,345.50');
    expect(translator('de').money({ amount: 1234550, currency: 'EUR' })).toBe('12.345,50\u00a0€');
    expect(translator('en').money({ amount: 500, currency: 'JPY' })).toBe('¥500');
    expect(translator('en').money({ amount: 12, currency: 'XX1' })).toBe('12 XX1');
  });

  it('writes ISO 8601 durations in words', () => {
    expect(translator('en').duration('P1Y')).toBe('1 year');
    expect(translator('en').duration('P2Y6M')).toBe('2 years and 6 months');
    expect(translator('de').duration('P30D')).toBe('30 Tage');
    expect(translator('de').duration('PT1H')).toBe('1 Stunde');
    expect(translator('en').duration('until you delete your account')).toBe('until you delete your account');
  });
});
