import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ASSET_FILES,
  assetIntegrity,
  assetsDir,
  contentSecurityPolicy,
  ParticipantView,
  renderDecisionPage,
  renderErrorPage,
  renderFlowOpenPage,
  renderFlowUnavailablePage,
  renderInboxPage,
} from './index';
import { approvalView, consentView, inboxItems, informedView } from './testing/fixtures';

const OPTIONS = { mode: 'page' as const, assetBase: '/assets/hosted/v1', apiBase: '' };

/** Ids of the step sections that are not hidden. */
function visibleSteps(page: string): string[] {
  return [...page.matchAll(/<section id="step-([a-z-]+)"[^>]*>/g)].filter((m) => !/\shidden(\s|>|$)/.test(m[0])).map((m) => m[1]);
}

function jsonElement(page: string, id: string): unknown {
  const match = new RegExp(`<script type="application/json" id="${id}">([\\s\\S]*?)</script>`).exec(page);
  if (!match) throw new Error(`no #${id}`);
  return JSON.parse(match[1]);
}

function textOf(page: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(page);
  return match ? match[1] : '';
}

/** Static checks every page must pass (CSP, no third-party assets, labelled controls, unique ids). */
function expectWellFormed(page: string) {
  expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
  expect(page).toMatch(/<html lang="(en|de)"/);
  expect(page).toContain('<main id="main"');
  // CSP: no inline script, inline handler or inline style.
  for (const tag of page.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/type="application\/json"|src="/);
  expect(page).not.toMatch(/\son[a-z]+\s*=/i);
  expect(page).not.toMatch(/\sstyle\s*=/i);
  expect(page).not.toMatch(/<style/i);
  // No third-party asset: scripts, styles, images and fonts come from the asset base.
  expect(page).not.toMatch(/<(script|img|iframe)[^>]+src="(https?:)?\/\//i);
  expect(page).not.toMatch(/<link[^>]+href="(https?:)?\/\//i);
  expect(page).not.toMatch(/@import|url\(/);
  // Unique ids.
  const ids = [...page.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
  expect(ids.length).toBe(new Set(ids).size);
  // Every visible control has a label.
  for (const control of page.match(/<(input|select|textarea)\b[^>]*>/g) ?? []) {
    if (/type="hidden"/.test(control)) continue;
    const id = /\sid="([^"]+)"/.exec(control)?.[1];
    expect(id).toBeDefined();
    expect(page).toContain(`<label for="${id}"`);
  }
  // Every aria-describedby / aria-labelledby reference exists.
  for (const m of page.matchAll(/aria-(?:describedby|labelledby)="([^"]+)"/g)) {
    for (const ref of m[1].split(/\s+/)) expect(ids).toContain(ref);
  }
}

describe('renderDecisionPage: consent, standard path', () => {
  it('renders the review step in English with the terms and the purpose controls', () => {
    const page = renderDecisionPage(consentView(), OPTIONS);
    expectWellFormed(page);
    expect(page).toContain('<html lang="en"');
    expect(visibleSteps(page)).toEqual(['decision']);
    expect(textOf(page, 'decision-title')).toBe('Share your contact details');
    expect(textOf(page, 'decision-requester')).toBe('Acme Shop asks for your consent.');
    expect(page).toContain('E-mail address <span class="hp-tag">(required)</span>');
    expect(page).toContain('<dt>Retention</dt><dd>2 years and 6 months</dd>');
    expect(page).toContain('<dt>Consent valid for</dt><dd>1 year</dd>');
    expect(page).toContain('href="https://acme.example/privacy"');
    // Consent purposes: unticked checkboxes; the required one is marked in text.
    expect(page).toMatch(/<input type="checkbox" id="purpose-newsletter" name="purposes" value="newsletter" data-basis="consent" data-required="true"[^>]*>/);
    expect(page).not.toMatch(/id="purpose-newsletter"[^>]*checked/);
    expect(page).toContain('(required to agree)');
    // Legitimate interest: ticked, with the right to object.
    expect(page).toMatch(/id="purpose-fraud"[^>]*data-basis="legitimate_interest"[^>]*checked>/);
    expect(page).toContain('You have the right to object: untick the box to object.');
    // Notice-only: text, no control.
    expect(page).not.toContain('id="purpose-billing"');
    expect(page).toContain('Legal basis: Contract. This does not need your consent.');
    expect(page).toContain('id="grant-button"');
    expect(page).toContain('id="decline-button"');
    expect(textOf(page, 'step-progress')).toBe('Step 4 of 5: Review and decide');
    expect(page).toContain('datetime="2025-03-01T12:05:00.000Z"');
    expect(page).toContain('Mar 1, 2025, 12:05 PM UTC');
  });

  it('renders the same page in German', () => {
    const page = renderDecisionPage(consentView({ locale: 'de-DE' }), OPTIONS);
    expectWellFormed(page);
    expect(page).toContain('<html lang="de"');
    expect(textOf(page, 'decision-requester')).toBe('Acme Shop bittet um Ihre Einwilligung.');
    expect(page).toContain('Rechtsgrundlage: Berechtigtes Interesse.');
    expect(page).toContain('Sie haben das Recht zu widersprechen');
    expect(page).toContain('<dt>Speicherdauer</dt><dd>2 Jahre und 6 Monate</dd>');
    expect(page).toContain('>Auswahl bestätigen</button>');
    expect(textOf(page, 'step-progress')).toBe('Schritt 4 von 5: Prüfen und entscheiden');
    // The flow text is English: marked as such inside the German page.
    expect(page).toContain('<h1 id="decision-title" lang="en">');
  });

  it('shows structured policies, free text and sensitive fields', () => {
    const base = consentView();
    const page = renderDecisionPage(
      consentView({
        flow: {
          ...base.flow!,
          retention: { duration: 'P6M', description: 'Then deleted.' },
          revocation_policy: { channel: 'e-mail', address: 'privacy@acme.example' },
          data_fields: [{ key: 'health', label: 'Health data', required: false, sensitive: true }],
        },
      }),
      OPTIONS,
    );
    expect(page).toContain('<dt>Retention</dt><dd>6 months – Then deleted.</dd>');
    expect(page).toContain('<dt>Withdrawing consent</dt><dd>channel: e-mail; address: privacy@acme.example</dd>');
    expect(page).toContain('Health data <span class="hp-tag">(optional) (sensitive data)</span>');
    const text = renderDecisionPage(consentView({ flow: { ...base.flow!, retention: 'As long as your account exists.', revocation_policy: 'Write to us.' } }), OPTIONS);
    expect(text).toContain('<dd>As long as your account exists.</dd>');
    expect(text).toContain('<dd>Write to us.</dd>');
  });

  it('lets the options locale win and falls back to English for unknown locales', () => {
    expect(renderDecisionPage(consentView({ locale: 'en' }), { ...OPTIONS, locale: 'de-CH,de;q=0.9' })).toContain('<html lang="de"');
    expect(renderDecisionPage(consentView({ locale: 'fr-FR', flow: { ...consentView().flow!, locale: 'fr' } }), OPTIONS)).toContain('<html lang="en"');
  });

  it('shows the right step for every in-flight status', () => {
    const expected: Record<string, string> = { pending: 'start', authenticating: 'sign-in', verifying: 'verifying', reviewing: 'decision' };
    for (const [status, step] of Object.entries(expected)) {
      const page = renderDecisionPage(consentView({ status: status as ParticipantView['status'] }), OPTIONS);
      expect([status, visibleSteps(page)]).toEqual([status, [step]]);
      expectWellFormed(page);
    }
    const signIn = renderDecisionPage(consentView({ status: 'authenticating' }), OPTIONS);
    expect(signIn).toMatch(/<input type="email" id="sign-in-email" name="email"[^>]*autocomplete="email"/);
    expect(signIn).toMatch(/<form id="code-form"[^>]*hidden>/);
    expect(signIn).toMatch(/<input type="text" id="sign-in-code" name="code"[^>]*autocomplete="one-time-code"/);
  });
});

describe('renderDecisionPage: consent, informed path', () => {
  it('shows the disclosures with an acknowledgement in the informed status', () => {
    for (const locale of ['en', 'de']) {
      const page = renderDecisionPage(informedView({ locale }), OPTIONS);
      expectWellFormed(page);
      expect(visibleSteps(page)).toEqual(['informed']);
      expect(page).not.toContain('id="step-sign-in"');
      expect(page).toContain('id="informed-ack"');
      expect(page).toContain('data-purpose-key="billing"');
      expect(textOf(page, 'step-progress')).toBe(locale === 'en' ? 'Step 2 of 4: Information' : 'Schritt 2 von 4: Informationen');
    }
  });

  it('shows the decision in evidenced and the start in pending', () => {
    expect(visibleSteps(renderDecisionPage(informedView({ status: 'evidenced' }), OPTIONS))).toEqual(['decision']);
    const pending = renderDecisionPage(informedView({ status: 'pending' }), OPTIONS);
    expect(visibleSteps(pending)).toEqual(['start']);
    expect(pending).toContain('First you read how your data will be used');
  });
});

describe('renderDecisionPage: approval', () => {
  it('renders the action, the value and the buttons in English and German', () => {
    const en = renderDecisionPage(approvalView(), OPTIONS);
    expectWellFormed(en);
    expect(visibleSteps(en)).toEqual(['decision']);
    expect(textOf(en, 'decision-title')).toBe('Refund order 1042');
    expect(textOf(en, 'decision-requester')).toBe('Acme Shop asks you to approve an action.');
    expect(textOf(en, 'approval-action')).toBe('refund.create');
    expect(textOf(en, 'approval-value')).toBe('€12,345.50');
    expect(textOf(en, 'approval-trigger')).toBe('The value exceeds the agent’s limit');
    expect(en).toContain('<code>agt_support_7</code>');
    for (const id of ['approve-button', 'deny-button', 'counter-button', 'counter-note']) expect(en).toContain(`id="${id}"`);
    expect(en).not.toContain('id="consent-form"');

    const de = renderDecisionPage(approvalView({ locale: 'de' }), { ...OPTIONS, mode: 'embed' });
    expectWellFormed(de);
    expect(textOf(de, 'approval-value')).toBe('12.345,50\u00a0€');
    expect(de).toContain('>Freigeben</button>');
    expect(de).not.toContain('class="hp-banner"');
    expect(de).not.toContain('<footer');
  });

  it('renders an approval without a value', () => {
    const page = renderDecisionPage(approvalView({ approval: { ...approvalView().approval!, value: null, agent_id: null } }), OPTIONS);
    expect(page).not.toContain('id="approval-value"');
    expect(page).not.toContain('id="approval-agent"');
  });
});

describe('renderDecisionPage: terminal states', () => {
  const cases: [Partial<ParticipantView>, string, string, string][] = [
    [{ status: 'fulfilled', outcome: 'granted' }, 'en', 'Thank you', 'Your consent has been recorded.'],
    [{ status: 'fulfilled', outcome: 'declined' }, 'en', 'Thank you', 'You declined. Your decision has been recorded.'],
    [{ status: 'fulfilled', outcome: null }, 'de', 'Vielen Dank', 'Ihre Entscheidung wurde gespeichert.'],
    [{ status: 'expired' }, 'en', 'This request has expired', 'This request is no longer open. Ask Acme Shop to send you a new one.'],
    [{ status: 'expired' }, 'de', 'Diese Anfrage ist abgelaufen', 'Diese Anfrage ist nicht mehr offen. Bitten Sie Acme Shop um eine neue.'],
    [{ status: 'revoked' }, 'en', 'Consent withdrawn', 'You withdrew this consent. It no longer applies.'],
    [{ status: 'revoked' }, 'de', 'Einwilligung widerrufen', 'Sie haben diese Einwilligung widerrufen. Sie gilt nicht mehr.'],
  ];
  it.each(cases)('%j in %s shows a final message', (overrides, locale, title, message) => {
    const page = renderDecisionPage(consentView({ ...overrides, locale }), OPTIONS);
    expectWellFormed(page);
    expect(visibleSteps(page)).toEqual(['done']);
    expect(textOf(page, 'step-done-title')).toBe(title);
    expect(textOf(page, 'done-message')).toBe(message);
    expect(page).toMatch(/<div id="cancel-area"[^>]*hidden>/);
    expect(page).toMatch(/<p id="deadline"[^>]*hidden>/);
    expect(page).toMatch(/<p id="step-progress"[^>]*hidden>/);
  });

  it('shows approval outcomes', () => {
    expect(textOf(renderDecisionPage(approvalView({ status: 'fulfilled', outcome: 'countered' }), OPTIONS), 'done-message')).toBe('Your counter-proposal has been sent.');
    expect(textOf(renderDecisionPage(approvalView({ status: 'fulfilled', outcome: 'denied', locale: 'de' }), OPTIONS), 'done-message')).toBe('Sie haben die Aktion abgelehnt.');
  });
});

describe('escaping', () => {
  const evil = '<script>alert(1)</script>"\'&`<!--';
  function evilView(kind: 'consent' | 'approval'): ParticipantView {
    const base = kind === 'consent' ? consentView() : approvalView();
    return {
      ...base,
      session_token: `dts_${evil}`,
      application: { id: evil, name: evil },
      signed_in: { email_hint: evil },
      redirect_uri: evil,
      flow:
        kind === 'consent'
          ? {
              ...base.flow!,
              title: evil,
              name: evil,
              description: evil,
              policy_url: `javascript:alert(1)//${evil}`,
              retention: evil,
              revocation_policy: evil,
              consent_duration: evil,
              locale: evil,
              data_fields: [{ key: evil, label: evil, required: true }],
              purposes: [
                { key: evil, label: evil, description: evil, basis: evil, mechanism: evil, required: true, takes_decision: true },
                { key: `${evil}2`, label: evil, description: evil, basis: 'legitimate_interest', mechanism: 'opt_out', required: false, takes_decision: true },
                { key: `${evil}3`, label: evil, description: evil, basis: evil, mechanism: null, required: false, takes_decision: false },
              ],
            }
          : null,
      approval:
        kind === 'approval'
          ? { title: evil, description: evil, action: evil, value: { amount: 100, currency: evil }, trigger: evil, agent_id: evil }
          : null,
    };
  }

  it.each(['consent', 'approval'] as const)('escapes every %s view string', (kind) => {
    for (const status of ['reviewing', 'informed', 'fulfilled'] as const) {
      const view = evilView(kind);
      const page = renderDecisionPage({ ...view, status, path: status === 'informed' ? 'informed' : 'standard' }, OPTIONS);
      expect(page).not.toContain('<script>alert');
      expect(page).not.toContain('"\'&`<!--');
      expect(page).not.toContain('<!--');
      expect(page).not.toMatch(/href="javascript:/i);
      expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;&#96;&lt;!--');
      expectWellFormed(page);
      // Exactly the two JSON elements and the asset script.
      expect((page.match(/<script\b/g) ?? []).length).toBe(3);
      expect((page.match(/<\/script>/g) ?? []).length).toBe(3);
    }
  });

  it('escapes < in the JSON view element and round-trips the view', () => {
    const view = evilView('consent');
    const page = renderDecisionPage(view, OPTIONS);
    const raw = /<script type="application\/json" id="decision-view">([\s\S]*?)<\/script>/.exec(page)![1];
    expect(raw).not.toContain('<');
    expect(raw).not.toContain('>');
    expect(raw).toContain('\\u003cscript\\u003e');
    expect(jsonElement(page, 'decision-view')).toEqual(view);
    const withSeparators = consentView({ application: { id: 'a', name: 'x\u2028y\u2029z' } });
    const rawSep = /id="decision-view">([\s\S]*?)<\/script>/.exec(renderDecisionPage(withSeparators, OPTIONS))![1];
    expect(rawSep).toContain('\\u2028');
    expect(jsonElement(renderDecisionPage(withSeparators, OPTIONS), 'decision-view')).toEqual(withSeparators);
  });

  it('escapes inbox and error page input', () => {
    const items = inboxItems().map((item) => ({ ...item, title: evil, session_token: `${item.session_token}"${evil}`, application_name: evil }));
    const inbox = renderInboxPage(items, { filters: { application_id: evil }, nextCursor: evil });
    expect(inbox).not.toContain('<script>alert');
    expectWellFormed(inbox);
    const error = renderErrorPage({ status: 404, title: evil, message: evil, requestId: evil, homeUrl: 'javascript:alert(1)', details: [{ field: evil, reason: evil }] });
    expect(error).not.toContain('<script>alert');
    expect(error).not.toContain('javascript:');
  });
});

describe('page data and assets', () => {
  it('carries the view and the script configuration as JSON', () => {
    const view = consentView();
    const page = renderDecisionPage(view, { mode: 'embed', assetBase: '/assets/hosted/v1/', apiBase: 'https://api.example/', locale: 'de' });
    expect(jsonElement(page, 'decision-view')).toEqual(view);
    const config = jsonElement(page, 'decision-config') as { mode: string; api_base: string; locale: string; messages: Record<string, string> };
    expect(config).toMatchObject({ mode: 'embed', api_base: 'https://api.example', locale: 'de' });
    expect(config.messages.done_granted).toBe('Ihre Einwilligung wurde gespeichert.');
    expect(page).toContain('data-mode="embed"');
  });

  it('loads the script deferred and the stylesheet with SRI from the asset base', () => {
    const page = renderDecisionPage(consentView(), OPTIONS);
    expect(page).toContain(
      `<script src="/assets/hosted/v1/participant.js" integrity="${assetIntegrity('participant.js')}" crossorigin="anonymous" defer></script>`,
    );
    expect(page).toContain(`<link rel="stylesheet" href="/assets/hosted/v1/participant.css" integrity="${assetIntegrity('participant.css')}" crossorigin="anonymous">`);
  });

  it('ships the assets and computes their integrity from the bytes', () => {
    expect(existsSync(assetsDir())).toBe(true);
    for (const file of ASSET_FILES) {
      const bytes = readFileSync(join(assetsDir(), file));
      expect(bytes.length).toBeGreaterThan(0);
      expect(assetIntegrity(file)).toBe(`sha384-${createHash('sha384').update(bytes).digest('base64')}`);
    }
    expect(() => assetIntegrity('../package.json')).toThrow();
  });

  it('recommends a strict CSP', () => {
    expect(contentSecurityPolicy()).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(contentSecurityPolicy({ frameAncestors: ['http://localhost:4000'] })).toContain('frame-ancestors http://localhost:4000');
  });
});

describe('renderInboxPage', () => {
  it('lists requests with links, filters, sort and a next page', () => {
    const page = renderInboxPage(inboxItems(), { nextCursor: 'cur_2', filters: { kind: 'approval', trigger: 'value', application_id: 'app_1' }, sort: 'newest' });
    expectWellFormed(page);
    expect(page).toContain('<form id="inbox-filters" class="hp-form hp-filters" method="get" action="/inbox"');
    expect(page).toContain('href="/decisions/dts_a"');
    expect(page).toContain('href="/decisions/dts_b"');
    expect(page).toContain('<option value="approval" selected>');
    expect(page).toContain('<option value="value" selected>');
    expect(page).toContain('<option value="newest" selected>');
    expect(page).toContain('<input type="hidden" name="application_id" value="app_1">');
    expect(page).toContain('href="/inbox?kind=approval&amp;trigger=value&amp;application_id=app_1&amp;sort=newest&amp;cursor=cur_2"');
    expect(page).toContain('From Support Bot');
    expect(page).toContain('No deadline');
    // A request without a deadline of its own shows when it expires, the time it must be decided by.
    const expiring = renderInboxPage([{ ...inboxItems()[1], expires_at: '2025-03-02T10:00:00.000Z' }], {});
    expect(expiring).toContain('<time datetime="2025-03-02T10:00:00.000Z" data-local-time="datetime">');
    expect(expiring).not.toContain('No deadline');
    // The next page keeps the page size.
    expect(renderInboxPage(inboxItems(), { nextCursor: 'cur_2', filters: { limit: 5 } })).toContain('href="/inbox?sort=deadline&amp;limit=5&amp;cursor=cur_2"');
  });

  it('shows an empty state in both languages', () => {
    expect(textOf(renderInboxPage([], {}), 'inbox-empty')).toBe('You have no pending requests.');
    expect(textOf(renderInboxPage([], { locale: 'de', filters: { kind: 'consent' } }), 'inbox-empty')).toBe('Keine Anfragen passen zu diesen Filtern.');
    expect(renderInboxPage([], {})).not.toContain('id="inbox-next"');
  });
});

describe('error pages', () => {
  it('renders 404, 410 and 421 with the home country', () => {
    const notFound = renderErrorPage({ status: 404, locale: 'en' });
    expectWellFormed(notFound);
    expect(textOf(notFound, 'page-title')).toBe('Page not found');
    expect(textOf(renderErrorPage({ status: 410, locale: 'de' }), 'page-title')).toBe('Diese Seite ist nicht mehr verfügbar');
    const wrong = renderErrorPage({ status: 421, locale: 'en', homeCountry: 'de', homeUrl: 'http://127.0.0.1:3001/decisions/dts_x' });
    expectWellFormed(wrong);
    expect(textOf(wrong, 'page-message')).toBe('Your data is kept in your home country Germany (DE). Please continue there.');
    expect(wrong).toContain('data-home-country="DE"');
    expect(wrong).toContain('href="http://127.0.0.1:3001/decisions/dts_x"');
    expect(textOf(renderErrorPage({ status: 421, locale: 'de', homeCountry: 'US' }), 'page-message')).toBe(
      'Ihre Daten werden in Ihrem Heimatland Vereinigte Staaten (US) gespeichert. Bitte fahren Sie dort fort.',
    );
    const refused = renderErrorPage({ status: 400, locale: 'en', message: 'Invalid query parameters', details: [{ field: 'kind', reason: 'kind must be one of the following values: consent, approval' }, { field: '', reason: 'no field' }] });
    expectWellFormed(refused);
    expect(textOf(refused, 'page-message')).toBe('Invalid query parameters');
    expect(refused).toContain('<ul id="error-details"><li><code>kind</code>: kind must be one of the following values: consent, approval</li><li>no field</li></ul>');
    expect(renderErrorPage({ status: 400, details: [] })).not.toContain('error-details');
    const custom = renderErrorPage({ status: 503, title: 'Down', message: 'Later.' });
    expect(textOf(custom, 'page-title')).toBe('Down');
    expect(textOf(custom, 'error-status')).toBe('Error 503');
  });

  it('renders the flow-unavailable page', () => {
    const en = renderFlowUnavailablePage('en');
    expectWellFormed(en);
    expect(textOf(en, 'page-title')).toBe('This form is not available');
    expect(renderFlowUnavailablePage('de-DE')).toContain('<html lang="de"');
    expect(renderFlowUnavailablePage(undefined)).toContain('<html lang="en"');
  });

  it('renders the hosted flow page as a form that opens the session by POST, its address escaped', () => {
    const en = renderFlowOpenPage('en', { action: '/accord/flw_1?redirect_uri=https%3A%2F%2Fshop.example%2F&x="y"' });
    expectWellFormed(en);
    expect(textOf(en, 'page-title')).toBe('Opening the form');
    expect(en).toContain('<form id="flow-open-form" method="post" action="/accord/flw_1?redirect_uri=https%3A%2F%2Fshop.example%2F&amp;x=&quot;y&quot;" data-auto-submit="true">');
    expect(textOf(en, 'flow-open-button')).toBe('Continue');
    const de = renderFlowOpenPage('de', { action: '/accord/flw_1' });
    expect(de).toContain('<html lang="de"');
    expect(textOf(de, 'flow-open-button')).toBe('Weiter');
  });
});
