import { newOneTimeCode, oneTimeCodeHash, oneTimeCodeMatches } from './one-time-code';

describe('one-time codes', () => {
  const key = 'k'.repeat(32);

  it('match the code as mailed, with the spaces a person types around or inside it, and nothing else', () => {
    const code = newOneTimeCode();
    expect(code).toMatch(/^\d{6}$/);
    const stored = oneTimeCodeHash(key, code, 'inbox', 'ada@example.com');
    for (const typed of [code, ` ${code} `, `${code.slice(0, 3)} ${code.slice(3)}`, `${code.slice(0, 2)}\u00a0${code.slice(2)}`]) {
      expect([typed, oneTimeCodeMatches(key, stored, typed, 'inbox', 'ada@example.com')]).toEqual([typed, true]);
    }
    const other = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    expect(oneTimeCodeMatches(key, stored, other, 'inbox', 'ada@example.com')).toBe(false);
    // Bound to what it is for.
    expect(oneTimeCodeMatches(key, stored, code, 'inbox', 'bob@example.com')).toBe(false);
    expect(oneTimeCodeMatches(key, stored, code, 'sign-in', 'ada@example.com')).toBe(false);
  });
});
