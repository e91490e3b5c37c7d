import { assetIntegrity } from './assets';
import { ConsentFieldView, renderConsentFieldErrorPage, renderConsentFieldPage } from './render-consent-field';

const view: ConsentFieldView = {
  application: { name: 'Acme <Shop>' },
  flow: { id: 'flw_dev_0123456789abcdef', version: 3, locale: 'en', policy_url: 'https://acme.example/privacy' },
  purposes: [
    { key: 'newsletter', label: 'Newsletter', description: 'Monthly news', basis: 'consent', control: 'consent' },
    { key: 'fraud', label: 'Fraud prevention', description: null, basis: 'legitimate_interest', control: 'objection' },
    { key: 'terms', label: 'Terms of service', description: null, basis: 'contract', control: 'notice' },
  ],
};
const script = { url: '/sdk/v1/service-field-frame.js', integrity: 'sha384-abc' };
const options = { locale: 'en' as const, theme: 'auto' as const, script, serviceName: 'Decision, Consent and Receipt Service', config: { proof: 'a.b.c', host_origin: 'https://shop.example', note: '</script><script>alert(1)</script>' } };

describe('renderConsentFieldPage', () => {
  const page = renderConsentFieldPage(view, options);

  it('renders a consent purpose unticked, a right to object ticked with the objection wording, a notice-only purpose as text', () => {
    expect(page).toContain('<input type="checkbox" id="cf-newsletter" name="newsletter" data-purpose-key="newsletter" data-basis="consent" aria-describedby="cf-newsletter-desc">');
    expect(page).toContain('<input type="checkbox" id="cf-fraud" name="fraud" data-purpose-key="fraud" data-basis="legitimate_interest" aria-describedby="cf-fraud-basis" checked>');
    expect(page).toContain('You have the right to object: untick the box to object.');
    expect(page).toContain('<li data-purpose-key="terms" data-control="notice">');
    expect(page).not.toMatch(/<input[^>]*terms/);
    expect(page.match(/<input /g)).toHaveLength(2);
  });

  it('always shows the recorded-by mark, and the policy link', () => {
    expect(page).toContain('<p id="recorded-by" class="cf-mark">Recorded by Decision, Consent and Receipt Service</p>');
    expect(page).toContain('href="https://acme.example/privacy" target="_blank" rel="noopener noreferrer"');
  });

  it('loads only its stylesheet and the frame script, with their integrity, and hands the script its configuration as JSON', () => {
    expect(page).toContain(`<link rel="stylesheet" href="/assets/hosted/v1/consent-field.css" integrity="${assetIntegrity('consent-field.css')}" crossorigin="anonymous">`);
    expect(page).toContain('<script type="module" src="/sdk/v1/service-field-frame.js" integrity="sha384-abc" crossorigin="anonymous"></script>');
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page).not.toContain('style=');
    const json = /<script type="application\/json" id="field-config">([^<]*)<\/script>/.exec(page)![1];
    expect(JSON.parse(json)).toEqual(options.config);
  });

  it('escapes the flow and application text', () => {
    expect(page).toContain('Your choices for Acme &lt;Shop&gt;');
    expect(page).not.toContain('Acme <Shop>');
  });

  it('speaks German, marks English flow wording with its language, and carries the theme', () => {
    const german = renderConsentFieldPage(view, { ...options, locale: 'de', theme: 'dark' });
    expect(german).toContain('<html lang="de" dir="ltr" data-theme="dark">');
    expect(german).toContain('Erfasst von Decision, Consent and Receipt Service');
    expect(german).toContain('<label for="cf-newsletter" lang="en">Newsletter</label>');
    expect(german).toContain('Rechtsgrundlage: Berechtigtes Interesse.');
  });
});

describe('renderConsentFieldErrorPage', () => {
  it('shows the reason and, with a script, hands it over to be posted to the host', () => {
    const page = renderConsentFieldErrorPage({ message: 'purposes: research can never be omitted', locale: 'en', script, config: { error: { code: 'validation_failed', message: 'x' } } });
    expect(page).toContain('<h1 id="field-error-title" class="cf-error-title">The consent choices cannot be shown</h1>');
    expect(page).toContain('purposes: research can never be omitted');
    expect(page).toContain('id="field-config"');
    const plain = renderConsentFieldErrorPage({ message: 'origin is not allowed' });
    expect(plain).not.toContain('<script');
  });
});
