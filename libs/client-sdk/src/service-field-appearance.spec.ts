import { appearanceColor, appearanceProperties, appearanceSize, FONT_FAMILIES, parseAppearance } from './service-field-appearance';

/** A stand-in for CSS.supports('color', …) that knows two names. */
const knows = (_property: string, value: string) => ['rebeccapurple', 'navy'].includes(value.toLowerCase());

describe('the consent field appearance vocabulary', () => {
  it('keeps every valid key of the vocabulary, normalised', () => {
    const parsed = parseAppearance(
      JSON.stringify({ fontFamily: 'serif', fontSize: '1.125rem', text: '#1B1C20', muted: 'rgb(74, 77, 87)', accent: 'hsl(220 80% 40%)', border: 'navy', radius: 6, density: 'compact' }),
      knows,
    );
    expect(parsed).toEqual({
      appearance: { fontFamily: 'serif', fontSize: '1.125rem', text: '#1b1c20', muted: 'rgb(74, 77, 87)', accent: 'hsl(220 80% 40%)', border: 'navy', radius: '6px', density: 'compact' },
      ignored: [],
    });
    expect(appearanceProperties(parsed.appearance)).toEqual({
      '--cf-font': FONT_FAMILIES.serif,
      '--cf-font-size': '1.125rem',
      '--cf-text': '#1b1c20',
      '--cf-muted': 'rgb(74, 77, 87)',
      '--cf-accent': 'hsl(220 80% 40%)',
      '--cf-border': 'navy',
      '--cf-radius': '6px',
    });
  });

  it('ignores each invalid value and unknown key, keeping the rest', () => {
    const parsed = parseAppearance(
      { fontFamily: 'comic-sans', fontSize: '64px', text: 'red; background: url(https://evil.example/x)', muted: 'rgba(0, 0, 0, 0.1)', accent: '#00ff00', radius: '-2px', density: 'cosy', background: '#fff' },
      knows,
    );
    expect(parsed).toEqual({ appearance: { accent: '#00ff00' }, ignored: ['fontFamily', 'fontSize', 'text', 'muted', 'radius', 'density', 'background'] });
  });

  it('ignores an appearance that is not a JSON object, and treats an absent one as empty', () => {
    expect(parseAppearance('{"accent": ', knows)).toEqual({ appearance: {}, ignored: ['appearance'] });
    expect(parseAppearance('["#000"]', knows)).toEqual({ appearance: {}, ignored: ['appearance'] });
    expect(parseAppearance('"#000"', knows)).toEqual({ appearance: {}, ignored: ['appearance'] });
    expect(parseAppearance(null, knows)).toEqual({ appearance: {}, ignored: [] });
    expect(parseAppearance('', knows)).toEqual({ appearance: {}, ignored: [] });
  });

  it.each([
    ['#abc', '#abc'],
    ['#A1B2C3', '#a1b2c3'],
    [' rgb(0,0,0) ', 'rgb(0,0,0)'],
    ['rgb(100% 50% 0%)', 'rgb(100% 50% 0%)'],
    ['hsl(120deg, 50%, 25%)', 'hsl(120deg, 50%, 25%)'],
    ['RebeccaPurple', 'rebeccapurple'],
  ])('accepts the opaque colour %j', (input, expected) => {
    expect(appearanceColor(input, knows)).toBe(expected);
  });

  it.each([
    '#abcd', // an alpha channel: text could be made invisible
    '#11223344',
    'rgba(0,0,0,1)',
    'rgb(0 0 0 / 50%)',
    'rgb(300, 0, 0)',
    'hsl(0, 150%, 50%)',
    'transparent',
    'currentColor',
    'chartreuse', // a name the browser (here: the stand-in) does not know
    'var(--x)',
    'url(x)',
    'expression(alert(1))',
    'red;color:blue',
    '',
    42,
    null,
  ])('ignores %j as a colour', (input) => {
    expect(appearanceColor(input, knows)).toBeUndefined();
  });

  it('accepts names only where the browser can check them', () => {
    expect(appearanceColor('navy', undefined)).toBeUndefined();
  });

  it('bounds sizes so the wording stays legible', () => {
    expect(appearanceSize('16px', 'fontSize')).toBe('16px');
    expect(appearanceSize(' 0.75REM ', 'fontSize')).toBe('0.75rem');
    expect(appearanceSize(14, 'fontSize')).toBe('14px');
    expect(appearanceSize('1.5em', 'fontSize')).toBe('1.5em');
    expect(appearanceSize('0', 'radius')).toBeUndefined();
    expect(appearanceSize('0px', 'radius')).toBe('0px');
    for (const bad of ['11px', '25px', '2rem', '16', '16pt', 'calc(1px + 1rem)', '1e2px', -4, Number.NaN, Infinity, '16px !important']) {
      expect([bad, appearanceSize(bad, 'fontSize')]).toEqual([bad, undefined]);
    }
    expect(appearanceSize('30px', 'radius')).toBeUndefined();
  });
});
