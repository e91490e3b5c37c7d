import { displayTextProblem, isKnownCurrency } from './display-text';

describe('displayTextProblem', () => {
  it('takes what a person reads as stored, emoji with joiners and accents included', () => {
    for (const text of ['Pay invoice 117', 'Überweisung an Müller', '👨‍👩‍👧 family plan', 'עברית ok', 'refunds.create']) expect(displayTextProblem(text)).toBeUndefined();
    expect(displayTextProblem('Line one\nline two\twith a tab', { multiline: true })).toBeUndefined();
    expect(displayTextProblem('', { blankAllowed: true })).toBeUndefined();
  });

  it('refuses what makes the page show something other than what is stored, naming why', () => {
    expect(displayTextProblem('Refund \u202e0001$\u202c to customer')).toMatch(/bidirectional control/);
    expect(displayTextProblem('a\u2066b')).toMatch(/bidirectional control/);
    expect(displayTextProblem('ring\u0007')).toBe('must not contain control characters');
    expect(displayTextProblem('two\nlines')).toBe('must not contain control characters');
    expect(displayTextProblem('bell\u0007', { multiline: true })).toBe('must not contain control characters other than tabs and line breaks');
    expect(displayTextProblem('invoice\u200bbot')).toMatch(/invisible characters/);
    expect(displayTextProblem('   ')).toBe('must not be blank');
    expect(displayTextProblem('a\ud800')).toMatch(/unpaired surrogate/);
    expect(displayTextProblem(7)).toBe('must be text');
  });
});

describe('isKnownCurrency', () => {
  it('knows ISO 4217 codes, funds and metals included, and not made-up ones', () => {
    for (const code of ['EUR', 'JPY', 'KWD', 'CLF', 'XAU']) expect(isKnownCurrency(code)).toBe(true);
    for (const code of ['XYZ', 'ABC', 'eur', 'EURO', 12]) expect(isKnownCurrency(code)).toBe(false);
  });
});
