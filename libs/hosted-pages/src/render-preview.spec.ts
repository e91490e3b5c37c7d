import { contentSecurityPolicy, previewViewOf, renderDecisionPage, renderDecisionPreviewPage, renderPreviewErrorPage } from './index';
import { consentView } from './testing/fixtures';

const FLOW = consentView().flow!;
const INPUT = { application: { id: 'tp_dev_0123456789abcdef', name: 'Acme Shop' }, flow: { ...FLOW, version: 3 } };
const NOW = new Date('2025-03-01T12:00:00.000Z');

/** Ids of the step sections that are not hidden. */
function visibleSteps(page: string): string[] {
  return [...page.matchAll(/<section id="step-([a-z-]+)"[^>]*>/g)].filter((m) => !/\shidden(\s|>|$)/.test(m[0])).map((m) => m[1]);
}

/** The markup between `<fieldset id="preview-controls" … disabled>` and its end. */
function disabledFieldset(page: string): string {
  const start = page.indexOf('<fieldset id="preview-controls" class="hp-preview-controls" disabled>');
  expect(start).toBeGreaterThan(0);
  const end = page.lastIndexOf('</fieldset>');
  return page.slice(start, end);
}

describe('template previews', () => {
  it('show the decision step of the flow version, as a person would see it, without a session', () => {
    const view = previewViewOf(INPUT, NOW);
    expect(view).toMatchObject({ session_token: '', kind: 'consent', status: 'reviewing', path: 'standard', signed_in: null, outcome: null, deadline_at: null, allowed_transitions: [] });
    const page = renderDecisionPreviewPage(INPUT, { device: 'desktop', theme: 'light', now: NOW });
    expect(visibleSteps(page)).toEqual(['decision']);
    // The same rendering as the real page: every purpose that takes a decision has its checkbox, notices are text.
    const real = renderDecisionPage(consentView({ flow: INPUT.flow, signed_in: null, deadline_at: null }), { mode: 'page' });
    for (const key of ['newsletter', 'marketing', 'fraud']) {
      const control = new RegExp(`<input type="checkbox" id="purpose-${key}"[^>]*>`);
      expect(real).toMatch(control);
      expect(page.match(control)?.[0]).toBe(real.match(control)?.[0]);
    }
    expect(page).toContain('<li class="hp-purpose-item" data-purpose-key="billing">');
    expect(page).toContain('id="grant-button"');
    expect(page).toContain('<h1 id="decision-title">Share your contact details</h1>');
    expect(page).toContain('Acme Shop asks for your consent.');
  });

  it('state that nothing is recorded, disable every control, and load no script and no data for one', () => {
    const page = renderDecisionPreviewPage(INPUT, { device: 'desktop', theme: 'light', now: NOW });
    expect(page).toContain('<p id="preview-banner-title" class="hp-preview-banner-title">Preview – nothing is recorded</p>');
    expect(page).toContain('This is version 3 of the request as a person sees it.');
    expect(page.indexOf('id="preview-banner"')).toBeLessThan(page.indexOf('id="decision-root"'));
    expect(page).toContain('data-preview="true"');
    expect(page).toContain('<title>Preview: Share your contact details – Acme Shop</title>');
    const controls = disabledFieldset(page);
    for (const control of page.match(/<(input|button|textarea|select)\b[^>]*>/g) ?? []) expect(controls).toContain(control);
    expect(page).not.toMatch(/<script\b/);
    expect(page).not.toContain('decision-view');
    expect(page).not.toContain('<noscript>');
  });

  it('fix the theme and the device on the document', () => {
    const dark = renderDecisionPreviewPage(INPUT, { device: 'mobile', theme: 'dark', now: NOW });
    expect(dark).toMatch(/<html lang="en" dir="ltr" data-theme="dark" data-device="mobile">/);
    expect(dark).toContain('<meta name="color-scheme" content="dark">');
    const light = renderDecisionPreviewPage(INPUT, { device: 'desktop', theme: 'light', now: NOW });
    expect(light).toMatch(/<html lang="en" dir="ltr" data-theme="light" data-device="desktop">/);
    expect(light).toContain('<meta name="color-scheme" content="light">');
    // The real pages follow the person's preference.
    expect(renderDecisionPage(consentView(), { mode: 'page' })).toContain('<meta name="color-scheme" content="light dark">');
  });

  it('follow the flow pattern and the language', () => {
    const informed = { ...INPUT, flow: { ...INPUT.flow, pattern: 'informed' } };
    expect(previewViewOf(informed, NOW)).toMatchObject({ path: 'informed', status: 'evidenced' });
    expect(visibleSteps(renderDecisionPreviewPage(informed, { device: 'desktop', theme: 'light' }))).toEqual(['decision']);
    const german = renderDecisionPreviewPage(INPUT, { device: 'desktop', theme: 'light', locale: 'de-DE' });
    expect(german).toContain('Vorschau – es wird nichts gespeichert');
    expect(german).toMatch(/<html lang="de"/);
  });

  it('have error pages for an expired link, a link that is not valid and a bad parameter', () => {
    const expired = renderPreviewErrorPage({ status: 410 });
    expect(expired).toContain('data-status="410"');
    expect(expired).toContain('<h1 id="page-title">This preview has expired</h1>');
    expect(expired).toContain('Preview links last 10 minutes.');
    const invalid = renderPreviewErrorPage({ status: 404, locale: 'de' });
    expect(invalid).toContain('<h1 id="page-title">Vorschau nicht gefunden</h1>');
    const bad = renderPreviewErrorPage({ status: 400, message: 'device: must be desktop or mobile' });
    expect(bad).toContain('data-status="400"');
    expect(bad).toContain('device: must be desktop or mobile');
  });

  it('are sent with a CSP that lets them send nothing', () => {
    expect(contentSecurityPolicy({ frameAncestors: ["'self'"], sendsNothing: true })).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
    );
  });
});
