import { base64url, SignJWT } from 'jose';
import { Client } from 'pg';
import type { Browser, Frame, Page } from 'playwright-core';
import { validateReceipt } from '@dcr/receipts';
import { expectNoAxeViolations, HostPageServer, launchChromium, PageServer, receivedMessages, startHostPageServer, startPageServer, unexpectedProblems, waitForMessage, WatchedPages } from '../../support/browser';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../../support/country-harness';
import { NEWSLETTER_FLOW } from '../../support/fixtures';
import { IdempotencyService } from '../../../apps/gateway/src/idempotency/idempotency.service';

jest.setTimeout(90000);

interface RecordedEvent {
  type: string;
  value: any;
}


/** Element events, kept in sessionStorage so that they survive the form's navigation. */
const RECORDER = `
  window.events = [];
  window.persist = function (type) {
    return function (value) {
      var entry = { type: type, value: value === undefined ? null : JSON.parse(JSON.stringify(value)) };
      window.events.push(entry);
      var list = JSON.parse(sessionStorage.getItem('events') || '[]');
      list.push(entry);
      sessionStorage.setItem('events', JSON.stringify(list));
    };
  };
  window.listen = function (field) {
    field.addEventListener('ready', function (e) { persist('ready')(e.detail); });
    field.addEventListener('change', function (e) { persist('change')(e.detail); });
    field.addEventListener('captured', function (e) { persist('captured')(e.detail); });
    field.addEventListener('error', function (e) { persist('error')({ message: e.detail.message, code: e.detail.code }); });
  };`;

/**
 * The consent field element against a running country pair in headless Chromium: a real HTML form
 * with the field, used with the keyboard only, whose token the server commits into a record with an
 * embedded_field receipt; the appearance applied inside the frame and sent nowhere else; one field per
 * flow per form; the unreachable service; forged and replayed render proofs; axe checks of the field.
 */
describe('the consent field element in a browser', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  let browser: Browser;
  let pages: PageServer;
  let host: HostPageServer;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let publishableKey: string;
  let flowId: string;
  let fieldScript: { url: string; loads: Array<{ url: string; integrity: string }> };
  const watched = new WatchedPages(() => browser);

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });

  /** A form page with the field script (every module preloaded under its integrity). */
  function formPage(title: string, fields: string, extra = ''): string {
    const preloads = fieldScript.loads.map((m) => `<link rel="modulepreload" href="${m.url}" integrity="${m.integrity}" crossorigin="anonymous">`).join('\n');
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="icon" href="data:,">
${preloads}
<script>${RECORDER}</script>
<script type="module" src="${fieldScript.url}" integrity="${fieldScript.loads[0].integrity}" crossorigin="anonymous"></script>
</head>
<body>
<main>
<h1>${title}</h1>
<form id="signup" action="/submit" method="post">
<label for="email">E-mail</label> <input id="email" name="email" type="email" required>
${fields}
<button id="submit" type="submit">Sign up</button>
</form>
${extra}
</main>
<script>document.querySelectorAll('service-consent-field').forEach(listen);</script>
</body>
</html>`;
  }

  const newPage = () => watched.open();

  const unexpected = (problems: string[]) => unexpectedProblems(problems);

  /** The field's frame inside `selector` (the element's shadow root is open), once its script runs. */
  async function fieldFrame(page: Page, selector = 'service-consent-field'): Promise<Frame> {
    const frame = await (await page.waitForSelector(`${selector} iframe`)).contentFrame();
    if (!frame) throw new Error(`no frame in ${selector}`);
    await frame.waitForSelector('#field-root[data-ready="true"]');
    return frame;
  }

  /** A form with the field and `attach` (a script that sets `window.attachedReady`), the newsletter box ticked. */
  async function openWithNewsletterTicked(page: Page, path: string, attach: string): Promise<void> {
    await page.goto(pages.serve(path, formPage('Sign up', `<service-consent-field name="consent" flow="${flowId}"></service-consent-field>`, attach)));
    await page.waitForFunction(() => (globalThis as any).attachedReady === true);
    const frame = await fieldFrame(page);
    await frame.check('#cf-newsletter');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('service-consent-field').controls.newsletter === true);
  }

  const persisted = async (page: Page): Promise<RecordedEvent[]> => JSON.parse((await page.evaluate(() => (globalThis as any).sessionStorage.getItem('events'))) ?? '[]');
  const focused = (target: Page | Frame) => target.evaluate(() => (globalThis as any).document.activeElement?.id ?? null);
  const fieldUrl = (params: Record<string, string>, flow = flowId) => `${us.url}/field/v1/${flow}?${new URLSearchParams(params)}`;
  const fieldConfig = (html: string) => JSON.parse(/<script type="application\/json" id="field-config">([^<]*)<\/script>/.exec(html)![1]);

  async function receiptOf(recordId: string): Promise<any> {
    await eventually(async () => (await api('GET', `/api/v1/consent_receipts/${recordId}`)).status === 200);
    return (await api('GET', `/api/v1/consent_receipts/${recordId}`)).body;
  }

  beforeAll(async () => {
    const launching = launchChromium();
    countries = await startCountryPair({ adminToken, env: { NODE_ENV: 'development' } });
    ({ us, de } = countries);
    browser = await launching;
    pages = await startPageServer();
    host = await startHostPageServer(us.url);

    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    publishableKey = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken })).body.key;
    expect((await api('POST', `/api/v1/applications/${applicationId}/allowed_origins`, { allowed_origin: { origin: 'http://localhost' } })).status).toBe(201);
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, NEWSLETTER_FLOW);
    expect(flow.status).toBe(201);
    flowId = flow.body.id;
    expect((await api('POST', `/api/v1/flows/${flowId}/activate`)).status).toBe(200);
    fieldScript = (await http(us.url, 'GET', '/sdk/v1/manifest.json')).body.entry_points['service-field.js'];
  });

  afterEach(async () => {
    await watched.closeAll();
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await host?.close();
    await countries?.close();
  });

  it('captures a real form used with the keyboard only; the server commits the token into an embedded_field record with rendering evidence', async () => {
    const { context, page, problems } = await newPage();
    const captureRequests: Array<{ headers: Record<string, string>; body: any }> = [];
    const fieldResponses: Array<{ status: number; headers: Record<string, string> }> = [];
    page.on('request', (request) => {
      if (request.url() === `${us.url}/api/v1/captures`) captureRequests.push({ headers: request.headers(), body: request.postDataJSON() });
    });
    page.on('response', (response) => {
      if (response.url().startsWith(`${us.url}/field/v1/`)) fieldResponses.push({ status: response.status(), headers: response.headers() });
    });
    await page.goto(pages.serve('/keyboard', formPage('Sign up', `<service-consent-field name="consent" flow="${flowId}"></service-consent-field>`)));
    const frame = await fieldFrame(page);
    await expectNoAxeViolations(frame, 'the consent field (English)');

    // What the field renders: consent unticked, the right to object ticked, notice-only as text, the mark.
    expect(await frame.$$eval('input[type="checkbox"]', (boxes) => boxes.map((b: any) => [b.id, b.checked, b.required]))).toEqual([
      ['cf-newsletter', false, false],
      ['cf-analytics', false, false],
      ['cf-fraud', true, false],
    ]);
    expect(await frame.textContent('#cf-fraud-basis')).toContain('untick the box to object');
    expect(await frame.$$eval('li[data-control="notice"]', (items) => items.map((i: any) => i.dataset.purposeKey))).toEqual(['billing']);
    expect(await frame.textContent('#recorded-by')).toBe('Recorded by Decision, Consent and Receipt Service');
    // The host page cannot look inside, and the field set no cookie.
    expect(await page.evaluate(() => (globalThis as any).document.querySelector('service-consent-field').shadowRoot.querySelector('iframe').contentDocument)).toBeNull();
    expect(fieldResponses).toEqual([{ status: 200, headers: expect.objectContaining({ 'content-security-policy': expect.stringContaining(`frame-ancestors ${pages.origin}`) }) }]);
    expect(fieldResponses[0].headers['set-cookie']).toBeUndefined();

    // Keyboard only: into the form, into the frame and through its controls, out to the button.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('email');
    await page.keyboard.type('ada.field@example.com');
    await page.keyboard.press('Tab');
    expect(await focused(frame)).toBe('cf-newsletter');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused(frame)).toBe('cf-analytics');
    await page.keyboard.press('Tab');
    expect(await focused(frame)).toBe('cf-fraud');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused(frame)).toBe('field-policy-link');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('submit');
    await page.waitForFunction(() => {
      const controls = (globalThis as any).document.querySelector('service-consent-field').controls;
      return controls.newsletter === true && controls.fraud === false;
    });
    const proof = fieldConfig(await frame.content()).proof as string;
    await page.keyboard.press('Enter');
    await page.waitForSelector('#submitted');

    // The token went into the form under the element's name and service_capture_token.
    expect(pages.submissions).toHaveLength(1);
    const fields = pages.submissions[0].fields;
    expect(fields).toEqual({ email: 'ada.field@example.com', consent: expect.stringMatching(/^cap_us[0-9a-z]{30}$/), service_capture_token: fields.consent });
    const events = await persisted(page);
    expect(events.map((e) => e.type)).toEqual(['ready', 'change', 'change', 'captured']);
    expect(events[0].value).toEqual({ controls: { newsletter: false, analytics: false, fraud: true } });
    expect(events[3].value).toEqual({ token: fields.consent, expiresAt: expect.any(String) });
    // The frame posted the capture itself, with its render proof and no publishable key; the host never saw the proof.
    expect(captureRequests).toHaveLength(1);
    expect(captureRequests[0].headers['x-publishable-key']).toBeUndefined();
    expect(captureRequests[0].body).toEqual({
      flow_id: flowId,
      channel: 'embedded_field',
      decisions: {
        newsletter: { decision: 'granted', default_checked: false, mandatory: false },
        analytics: { decision: 'declined', default_checked: false, mandatory: false },
        fraud: { decision: 'declined', default_checked: true, mandatory: false },
      },
      render_proof: proof,
      rendering_evidence: {
        host_origin: pages.origin,
        controls: { newsletter: { changed: true, trusted_gesture: true }, analytics: { changed: false, trusted_gesture: false }, fraud: { changed: true, trusted_gesture: true } },
        // What the frame measured: IntersectionObserver v2 is conservative (a recent move or a late
        // first report under a loaded machine reads as not visible), so either value is honest here;
        // the receipt below must carry the same one.
        visible_at_submit: expect.any(Boolean),
        // Chromium has IntersectionObserver v2: occlusion and visual effects count.
        visibility_measurement: 'intersection_observer_v2',
      },
    });
    expect(JSON.stringify(events)).not.toContain(proof);
    expect(await context.cookies()).toEqual([]);

    // The organisation's server commits the token.
    const committed = await api('POST', `/api/v1/decisions/${fields.consent}/authorize`, { subject: { email: fields.email }, suppress_receipt: true });
    expect(committed.status).toBe(200);
    expect(committed.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'embedded_field' });
    const receipt = await receiptOf(committed.body.record_id);
    expect(validateReceipt(receipt)).toEqual({ valid: true, errors: [] });
    expect(receipt.extensions.collection_channel).toBe('embedded_field');
    expect(receipt.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id)).toEqual(['newsletter']);
    const common = {
      renderer: 'service-consent-field/1',
      notice_version: receipt.pii_processing.privacy_notice.reference,
      locale: 'en',
      rendered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      host_origin: pages.origin,
      visible_at_submit: captureRequests[0].body.rendering_evidence.visible_at_submit,
      visibility_measurement: captureRequests[0].body.rendering_evidence.visibility_measurement,
    };
    // What rests on the browser's word is named as such in every entry, not presented as observed.
    const asserted = ['host_origin', 'changed', 'trusted_gesture', 'visible_at_submit', 'visibility_measurement'];
    expect(receipt.extensions.rendering_evidence).toEqual([
      { purpose_id: 'newsletter', shown_as: 'unticked_checkbox', changed: true, trusted_gesture: true, ...common, asserted_by_browser: asserted },
      { purpose_id: 'analytics', shown_as: 'unticked_checkbox', changed: false, trusted_gesture: false, ...common, asserted_by_browser: asserted },
      { purpose_id: 'fraud', shown_as: 'ticked_checkbox_objection', changed: true, trusted_gesture: true, ...common, asserted_by_browser: asserted },
      { purpose_id: 'billing', shown_as: 'notice_text', ...common, asserted_by_browser: ['host_origin', 'visible_at_submit', 'visibility_measurement'] },
    ]);
    // The service showed the notice and asked for the decision when it rendered the field into the form.
    const renderedAt = receipt.extensions.rendering_evidence[0].rendered_at;
    expect(receipt.event.map((e: { event_state: string; event_time: string; entity_id: string }) => [e.event_state, e.event_time === renderedAt, e.entity_id === applicationId])).toEqual([
      ['notice shown', true, true],
      ['consent requested', true, true],
      ['consent given', false, false],
      ['objection recorded', false, false],
    ]);
    // Its event (the webhook's data, kept with the audit entry) states no presentation: the service rendered the boxes.
    const db = new Client({ connectionString: us.database.url });
    await db.connect();
    try {
      const payloadOf = async () =>
        (await db.query(`SELECT payload FROM audit_chain.entries WHERE event_type = 'consent.granted' AND payload->>'record_id' = $1`, [committed.body.record_id])).rows[0]?.payload;
      await eventually(async () => (await payloadOf()) !== undefined);
      const payload = await payloadOf();
      expect(payload.channel).toBe('embedded_field');
      expect(payload).not.toHaveProperty('presentation_stated');
    } finally {
      await db.end();
    }
    const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=${encodeURIComponent(fields.email)}`);
    expect(status.body.purposes).toMatchObject({ newsletter: { status: 'granted' }, analytics: { status: 'declined' }, fraud: { status: 'objected' } });
    expect(problems).toEqual([]);
  });

  it('applies the appearance inside the frame only: an invalid value is ignored, and no request carries it', async () => {
    const { page, problems } = await newPage();
    const requests: Array<{ method: string; url: string; body: string }> = [];
    page.on('request', (request) => requests.push({ method: request.method(), url: request.url(), body: request.postData() ?? '' }));
    const warnings: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text());
    });
    const appearance = {
      fontFamily: 'serif',
      fontSize: '18px',
      text: '#123456',
      accent: '#0b57d0',
      border: '#345678',
      radius: '12px',
      density: 'relaxed',
      muted: 'rgba(0, 0, 0, 0.2)',
      shadow: 'none',
    };
    await page.goto(
      pages.serve(
        '/styled',
        formPage('Anmelden', `<service-consent-field name="consent" flow="${flowId}" locale="de" theme="light" appearance='${JSON.stringify(appearance)}'></service-consent-field>`),
      ),
    );
    const frame = await fieldFrame(page);
    await frame.waitForSelector('html[data-appearance="applied"]');
    const styles = await frame.evaluate(() => {
      const doc = (globalThis as any).document;
      const style = (selector: string) => (globalThis as any).getComputedStyle(doc.querySelector(selector));
      return {
        text: style('label').color,
        font: style('label').fontFamily,
        size: style('body').fontSize,
        radius: style('.cf-box').borderTopLeftRadius,
        border: style('.cf-box').borderTopColor,
        accent: style('input[type="checkbox"]').accentColor,
        muted: style('.cf-hint').color,
        density: doc.documentElement.dataset.density,
        lang: doc.documentElement.lang,
        mark: doc.getElementById('recorded-by').textContent,
      };
    });
    expect(styles).toEqual({
      text: 'rgb(18, 52, 86)',
      font: expect.stringContaining('Georgia'),
      size: '18px',
      radius: '12px',
      border: 'rgb(52, 86, 120)',
      accent: 'rgb(11, 87, 208)',
      // The translucent muted colour is not in the vocabulary: the default stays.
      muted: 'rgb(74, 77, 87)',
      density: 'relaxed',
      lang: 'de',
      mark: 'Erfasst von Decision, Consent and Receipt Service',
    });
    expect(warnings).toEqual([expect.stringContaining('appearance muted, shadow ignored')]);
    await expectNoAxeViolations(frame, 'the consent field (German, with an appearance)');

    await page.fill('#email', 'bea.appearance@example.com');
    await frame.check('#cf-newsletter');
    await page.click('#submit');
    await page.waitForSelector('#submitted');
    expect(pages.submissions.at(-1)!.fields.consent).toMatch(/^cap_us/);

    // Every request of the page and of the frame: the field's page, its assets and its capture; none carries the appearance.
    const ofService = requests.filter((r) => r.url.startsWith(us.url)).map((r) => `${r.method} ${new URL(r.url).pathname}`);
    expect(ofService).toEqual(expect.arrayContaining([`GET /field/v1/${flowId}`, 'GET /assets/hosted/v1/consent-field.css', 'POST /api/v1/captures']));
    for (const request of requests) {
      const seen = `${decodeURIComponent(request.url)} ${request.body}`;
      for (const value of ['123456', '0b57d0', '345678', 'serif', 'relaxed', '18px', '12px']) expect([request.url, value, seen.includes(value)]).toEqual([request.url, value, false]);
    }
    expect(problems).toEqual([]);
  });

  it('refuses a second field for the same flow in one form, and reports a purposes subset that omits a consent purpose', async () => {
    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/twice',
        formPage(
          'Twice',
          `<service-consent-field id="first" name="consent" flow="${flowId}"></service-consent-field>
           <service-consent-field id="second" name="consent_again" flow="${flowId}"></service-consent-field>`,
          `<form id="other" action="/submit" method="post">
             <service-consent-field id="subset" name="consent" flow="${flowId}" purposes="analytics, fraud"></service-consent-field>
             <button type="submit">Other</button>
           </form>`,
        ),
      ),
    );
    await fieldFrame(page, '#first');
    await page.waitForFunction(() => ((globalThis as any).events as RecordedEvent[]).filter((e) => e.type === 'error').length >= 2);
    expect(await page.evaluate(() => (globalThis as any).document.querySelector('#second').shadowRoot?.querySelector('iframe') ?? null)).toBeNull();
    expect(await page.$$eval('#second input', (inputs) => inputs.length)).toBe(0);
    expect(await page.$$eval('#first input[type="hidden"]', (inputs) => inputs.map((i: any) => i.name))).toEqual(['consent', 'service_capture_token']);
    const errors = (await page.evaluate(() => (globalThis as any).events as RecordedEvent[])).filter((e) => e.type === 'error').map((e) => e.value.message);
    expect(errors).toEqual(
      expect.arrayContaining([
        `service-consent-field: a form holds one consent field per flow: this second field for ${flowId} was not rendered`,
        expect.stringMatching(/^service-consent-field: purposes: newsletter is a consent purpose: the field renders every consent purpose, it can never be omitted/),
      ]),
    );
    // The frame's own 400 is a failed load; the element says why on the console.
    expect(unexpected(problems)).toEqual([
      expect.stringContaining('a form holds one consent field per flow'),
      expect.stringContaining('newsletter is a consent purpose'),
    ]);
  });

  it('still submits the form when the service is unreachable, and an error event fires', async () => {
    // The frame loaded, then the capture cannot reach the service.
    {
      const { context, page, problems } = await newPage();
      await context.route(`${us.url}/api/v1/captures`, (route) => route.abort('connectionrefused'));
      await page.goto(pages.serve('/offline', formPage('Sign up', `<service-consent-field name="consent" flow="${flowId}"></service-consent-field>`)));
      const frame = await fieldFrame(page);
      await page.fill('#email', 'offline@example.com');
      await frame.check('#cf-newsletter');
      const started = Date.now();
      await page.click('#submit');
      await page.waitForSelector('#submitted');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(pages.submissions.at(-1)!.fields).toEqual({ email: 'offline@example.com', consent: '', service_capture_token: '' });
      expect((await persisted(page)).filter((e) => e.type === 'error')).toEqual([{ type: 'error', value: { message: expect.stringContaining('Could not reach the service'), code: 'connection_error' } }]);
      expect(unexpected(problems)).toEqual([]);
    }
    // The field never loaded at all.
    {
      const { context, page, problems } = await newPage();
      await context.route(`${us.url}/field/v1/**`, (route) => route.abort('connectionrefused'));
      await page.goto(pages.serve('/unreachable', formPage('Sign up', `<service-consent-field name="consent" flow="${flowId}"></service-consent-field>`)));
      await page.waitForSelector('service-consent-field iframe');
      await page.fill('#email', 'unreachable@example.com');
      await page.click('#submit');
      await page.waitForSelector('#submitted');
      expect(pages.submissions.at(-1)!.fields).toEqual({ email: 'unreachable@example.com', consent: '', service_capture_token: '' });
      expect((await persisted(page)).filter((e) => e.type === 'error')).toEqual([{ type: 'error', value: { message: expect.stringContaining("did not load. Is the service reachable, and is this page's origin an allowed origin of the application?"), code: 'field_not_loaded' } }]);
      expect(unexpected(problems)).toEqual([]);
    }
  });

  it('speaks protocol version 2 to its host origin only, and takes its appearance from that host', async () => {
    const { context, page } = await newPage();
    await page.goto(host.pageUrl(fieldUrl({ origin: host.origin })));
    const ready = await waitForMessage(page, (m) => m.data?.type === 'service-field:ready');
    expect(ready.origin).toBe(us.url);
    expect(ready.data).toEqual({
      type: 'service-field:ready',
      kind: 'consent',
      version: 2,
      payload: { flow_id: flowId, flow_version: 1, locale: 'en', controls: { newsletter: false, analytics: false, fraud: true } },
      ts: expect.stringMatching(/Z$/),
      message_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4/),
    });
    await waitForMessage(page, (m) => m.data?.type === 'service:resize' && Number.isInteger(m.data.payload.height) && m.data.payload.height > 100);
    const frame = (await (await page.waitForSelector('#decision-frame')).contentFrame())!;
    const proof = fieldConfig(await frame.content()).proof as string;
    expect(JSON.stringify(await receivedMessages(page))).not.toContain(proof);
    await expectNoAxeViolations(frame, 'the consent field page in a plain frame');
    await page.evaluate(() =>
      (globalThis as any).sendToFrame({ type: 'service-field:init', kind: 'consent', version: 2, payload: { appearance: { accent: '#0b57d0' } }, ts: new Date().toISOString(), message_id: crypto.randomUUID() }),
    );
    await frame.waitForSelector('html[data-appearance="applied"]');
    expect(await frame.evaluate(() => (globalThis as any).document.documentElement.style.getPropertyValue('--cf-accent'))).toBe('#0b57d0');

    // A field rendered for another origin is not shown in this host's frame (frame-ancestors), so it says nothing.
    const other = await context.newPage();
    await other.goto(host.pageUrl(fieldUrl({ origin: pages.origin })));
    await other.waitForTimeout(1000);
    expect(await receivedMessages(other)).toEqual([]);
  });

  it('refuses forged and replayed render proofs, and captures that do not match the rendering', async () => {
    const hostOrigin = 'http://localhost:4321';
    const rendered = await fetch(fieldUrl({ origin: hostOrigin }));
    expect(rendered.status).toBe(200);
    expect(rendered.headers.get('set-cookie')).toBeNull();
    expect(rendered.headers.get('content-security-policy')).toContain(`frame-ancestors ${hostOrigin}`);
    const { proof } = fieldConfig(await rendered.text());
    const decisions = {
      newsletter: { decision: 'granted', default_checked: false, mandatory: false },
      analytics: { decision: 'declined', default_checked: false, mandatory: false },
      fraud: { decision: 'granted', default_checked: true, mandatory: false },
    };
    const evidence = {
      host_origin: hostOrigin,
      controls: { newsletter: { changed: true, trusted_gesture: true }, analytics: { changed: false, trusted_gesture: false }, fraud: { changed: false, trusted_gesture: false } },
      visible_at_submit: true,
      visibility_measurement: 'intersection_observer',
    };
    const capture = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      http(us.url, 'POST', '/api/v1/captures', { body: { flow_id: flowId, channel: 'embedded_field', decisions, rendering_evidence: evidence, ...body }, headers });

    // What does not match the rendering is refused by name, and leaves the proof unused.
    const mismatched = await capture({ render_proof: proof, decisions: { ...decisions, fraud: { decision: 'declined', default_checked: false, mandatory: false }, billing: decisions.newsletter } });
    expect(mismatched.status).toBe(422);
    expect(mismatched.body.details).toEqual([
      { field: 'decisions.fraud', reason: 'default_checked must be true: the field rendered this box ticked' },
      { field: 'decisions.billing', reason: 'was rendered as text (notice-only): it takes no decision' },
    ]);
    const wrongHost = await capture({ render_proof: proof, rendering_evidence: { ...evidence, host_origin: 'http://localhost:9999' } });
    expect(wrongHost.status).toBe(422);
    expect(wrongHost.body.details).toEqual([{ field: 'rendering_evidence.host_origin', reason: 'differs from the origin the field was rendered for' }]);
    const inherited = await capture({ render_proof: proof, rendering_evidence: { ...evidence, controls: { ...evidence.controls, toString: { changed: true, trusted_gesture: true } } } });
    expect([inherited.status, inherited.body.details]).toEqual([422, [{ field: 'rendering_evidence.controls.toString', reason: 'is not a control the consent field rendered' }]]);
    // A field a control's evidence never holds is refused by name, not dropped.
    const extra = await capture({ render_proof: proof, rendering_evidence: { ...evidence, controls: { ...evidence.controls, newsletter: { ...evidence.controls.newsletter, value: 'secret' } } } });
    expect([extra.status, extra.body.details]).toEqual([422, [{ field: 'rendering_evidence.controls.newsletter.value', reason: "is not a field of a control's evidence (changed, trusted_gesture)" }]]);

    const first = await capture({ render_proof: proof });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ capture_token: expect.stringMatching(/^cap_us[0-9a-z]{30}$/), expires_at: expect.any(String) });

    // Replayed: a rendering captures once.
    const replayed = await capture({ render_proof: proof });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('already used') });
    // Retried by the frame under its Idempotency-Key after the answer was lost (the gateway keeps no
    // answer of a 5xx, so the retry runs again): the first capture's token, not a 401.
    const { proof: fresh } = fieldConfig(await (await fetch(fieldUrl({ origin: hostOrigin }))).text());
    const finish = IdempotencyService.prototype.finish;
    const lost = jest.spyOn(IdempotencyService.prototype, 'finish').mockImplementation(function (this: IdempotencyService, scope, key, _status, body, type) {
      return finish.call(this, scope, key, 504, body, type);
    });
    try {
      const sent = await capture({ render_proof: fresh }, { 'idempotency-key': 'field-retry-1' });
      const retried = await capture({ render_proof: fresh }, { 'idempotency-key': 'field-retry-1' });
      expect([sent.status, retried.status, retried.body]).toEqual([201, 201, sent.body]);
      // Without the key the proof is spent as before.
      expect((await capture({ render_proof: fresh })).status).toBe(401);
    } finally {
      lost.mockRestore();
    }

    // Forged: another host origin written into the proof, or a proof signed with another key.
    const [header, payload, signature] = proof.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const widened = [header, base64url.encode(JSON.stringify({ ...claims, host_origin: 'http://localhost:5555', jti: 'x'.repeat(22) })), signature].join('.');
    const altered = await capture({ render_proof: widened, rendering_evidence: { ...evidence, host_origin: 'http://localhost:5555' } });
    expect(altered.status).toBe(401);
    expect(altered.body.message).toContain('signature does not verify');
    const foreign = await new SignJWT({ ...claims, jti: undefined })
      .setProtectedHeader({ alg: 'HS256', typ: 'service-render-proof+jwt' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('y'.repeat(22))
      .sign(new Uint8Array(32).fill(1));
    expect((await capture({ render_proof: foreign })).status).toBe(401);

    // The proof belongs to embedded_field; embedded_field needs the proof.
    const keyed = await capture({}, { 'x-publishable-key': publishableKey, origin: pages.origin });
    expect(keyed.status).toBe(422);
    expect(keyed.body.details).toEqual([{ field: 'render_proof', reason: "embedded_field captures are posted by the consent field's frame with its render proof" }]);
    const snippet = await capture({ channel: 'form_capture', render_proof: proof, rendering_evidence: undefined });
    expect(snippet.status).toBe(422);
    expect(snippet.body.details).toEqual([{ field: 'channel', reason: 'a render proof authenticates embedded_field captures only' }]);
    // A committed proof's capture is an ordinary capture: the server authorizes it.
    const committed = await api('POST', `/api/v1/decisions/${first.body.capture_token}/authorize`, { subject: { email: 'cy.api@example.com' }, suppress_receipt: true });
    expect(committed.body).toMatchObject({ status: 'granted', channel: 'embedded_field' });
  });

  it('refuses to render the field for a bad origin, a bad subset or an application without allowed origins, naming why', async () => {
    const page = async (url: string) => {
      const response = await fetch(url);
      return { status: response.status, csp: response.headers.get('content-security-policy'), text: await response.text() };
    };
    const missing = await page(`${us.url}/field/v1/${flowId}`);
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('origin: the host page&#39;s origin is required');
    expect(missing.csp).toContain("frame-ancestors 'none'");
    const foreign = await page(fieldUrl({ origin: 'https://evil.example' }));
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('https://evil.example is not an allowed origin');
    const subset = await page(fieldUrl({ origin: pages.origin, purposes: 'analytics,nope' }));
    expect(subset.status).toBe(400);
    expect(subset.text).toContain('nope is not a purpose of this flow');
    expect(subset.text).toContain('newsletter is a consent purpose');
    expect(subset.csp).toContain(`frame-ancestors ${pages.origin}`);
    expect((await page(fieldUrl({ origin: pages.origin, theme: 'neon' }))).text).toContain('theme: must be light, dark or auto');
    // A parameter given twice reaches the gateway as a list: refused by name, not a 500.
    for (const name of ['purposes', 'locale', 'theme']) {
      const twice = await page(`${fieldUrl({ origin: pages.origin, purposes: 'newsletter,analytics', locale: 'en', theme: 'light' })}&${name}=${name === 'purposes' ? 'fraud' : 'dark'}`);
      expect([twice.status, twice.text]).toEqual([400, expect.stringContaining(`${name}: give it once`)]);
      expect(twice.csp).toContain(`frame-ancestors ${pages.origin}`);
    }
    const twoOrigins = await page(`${fieldUrl({ origin: pages.origin })}&origin=${encodeURIComponent('http://localhost:1')}`);
    expect([twoOrigins.status, twoOrigins.text]).toEqual([400, expect.stringContaining('origin: give it once')]);
    expect((await page(fieldUrl({ origin: pages.origin }, 'flw_dev_0000000000000000'))).status).toBe(404);
    const subsetOk = await page(fieldUrl({ origin: pages.origin, purposes: 'analytics,newsletter' }));
    expect(subsetOk.status).toBe(200);
    expect(Object.keys(fieldConfig(subsetOk.text).controls)).toEqual(['newsletter', 'analytics']);

    const { applicationId: bare, apiToken: token } = await applicationWithToken(us, adminToken, { name: 'No origins', environment: 'sandbox' });
    const flow = await http(us.url, 'POST', `/api/v1/applications/${bare}/flows`, { token, body: NEWSLETTER_FLOW });
    await http(us.url, 'POST', `/api/v1/flows/${flow.body.id}/activate`, { token });
    const none = await page(fieldUrl({ origin: pages.origin }, flow.body.id));
    expect(none.status).toBe(403);
    expect(none.text).toContain(`The application ${bare} has no allowed origin: the consent field needs at least one`);

    // The OpenAPI document describes the field's page and the field's capture body.
    const openapi = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    expect(openapi.paths['/field/v1/{flow_id}'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['flow_id', 'locale', 'origin', 'purposes', 'theme']);
    expect(JSON.stringify(openapi.components.schemas.CreateCaptureDto)).toContain('rendering_evidence');
    expect(openapi.components.schemas.RenderingEvidenceDto.required.sort()).toEqual(['controls', 'host_origin', 'visibility_measurement']);
  });

  it('answers the same token for the same choices, and captures anew with a fresh rendering\'s proof once they change', async () => {
    const { page, problems } = await newPage();
    const calls: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(us.url) && /\/(field\/v1|api\/v1\/captures)/.test(request.url())) calls.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    await page.goto(pages.serve('/again', formPage('Sign up', `<service-consent-field id="field" name="consent" flow="${flowId}"></service-consent-field>`)));
    const frame = await fieldFrame(page);
    const capture = () => page.evaluate(() => (globalThis as any).document.querySelector('#field').capture());
    const first = await capture();
    expect(await capture()).toEqual(first);
    expect(calls).toEqual([`GET /field/v1/${flowId}`, 'POST /api/v1/captures']);
    await frame.check('#cf-analytics');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#field').controls.analytics === true);
    const second = await capture();
    expect(second.token).not.toBe(first.token);
    // The used proof was renewed by reading the field's page again (same URL, same rendering).
    expect(calls).toEqual([`GET /field/v1/${flowId}`, 'POST /api/v1/captures', `GET /field/v1/${flowId}`, 'POST /api/v1/captures']);
    expect(await page.$$eval('#field input[type="hidden"]', (inputs) => inputs.map((i: any) => i.value))).toEqual([second.token, second.token]);
    const committed = await api('POST', `/api/v1/decisions/${second.token}/authorize`, { subject: { email: 'eve.again@example.com' }, suppress_receipt: true });
    expect(committed.status).toBe(200);
    expect((await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=eve.again%40example.com`)).body.purposes).toMatchObject({
      newsletter: { status: 'declined' },
      analytics: { status: 'granted' },
    });
    expect(problems).toEqual([]);
  });

  it('rejects capture() with the typed error naming render_proof when a new flow version outdated the field, and fires it at submit', async () => {
    const flow = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Outdated field' });
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const { page, problems } = await newPage();
    await page.goto(pages.serve('/outdated', formPage('Sign up', `<service-consent-field id="field" name="consent" flow="${flow.body.id}"></service-consent-field>`)));
    await fieldFrame(page);
    // The organisation publishes a new version while the page stays open.
    const reworded = { ...NEWSLETTER_FLOW.purpose_definitions, newsletter: { label: 'The monthly newsletter', basis: 'consent' } };
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/versions`, { purposes: NEWSLETTER_FLOW.purposes, purpose_definitions: reworded })).status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    const refused = await page.evaluate(() =>
      (globalThis as any).document
        .querySelector('#field')
        .capture()
        .then(
          () => null,
          (error: any) => ({ name: error.name, statusCode: error.statusCode, code: error.code, message: error.message, details: error.details, requestId: error.requestId }),
        ),
    );
    expect(refused).toEqual({
      name: 'InvalidRequestError',
      statusCode: 422,
      code: 'validation_failed',
      message: 'The request did not pass validation',
      details: [{ field: 'render_proof', reason: expect.stringContaining('reload the page') }],
      requestId: expect.stringMatching(/^req_/),
    });
    // At submit (a page loaded afresh, outdated again) the form goes without a token, and the error event carries the same typed error.
    await page.reload();
    await fieldFrame(page);
    const again = { ...reworded, newsletter: { label: 'The newsletter, monthly', basis: 'consent' } };
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/versions`, { purposes: NEWSLETTER_FLOW.purposes, purpose_definitions: again })).status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${flow.body.id}/activate`)).status).toBe(200);
    await page.evaluate(() => {
      const field = (globalThis as any).document.querySelector('#field');
      field.addEventListener('error', (event: any) => (globalThis as any).persist('failure')({ code: event.detail.code, details: event.detail.error?.details }));
    });
    await page.fill('#email', 'olga.outdated@example.com');
    await page.click('#submit');
    await page.waitForSelector('#submitted');
    expect((await persisted(page)).filter((event) => event.type === 'failure').map((event) => event.value)).toEqual([
      { code: 'validation_failed', details: [{ field: 'render_proof', reason: expect.stringContaining('reload the page') }] },
    ]);
    expect(pages.submissions.at(-1)!.fields).toEqual({ email: 'olga.outdated@example.com', consent: '', service_capture_token: '' });
    expect(problems.filter((problem) => !/422/.test(problem))).toEqual([]);
  });

  it('commits in the browser with capture({commit: true}) once the application allows it: an embedded_field_browser record', async () => {
    expect((await http(us.url, 'PATCH', `/api/v1/applications/${applicationId}/settings`, { token: adminToken, body: { browser_commit: true } })).status).toBe(200);
    const { page, problems } = await newPage();
    await page.goto(pages.serve('/commit', formPage('Sign up', `<service-consent-field id="field" name="consent" flow="${flowId}"></service-consent-field>`)));
    const frame = await fieldFrame(page);
    await frame.check('#cf-analytics');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#field').controls.analytics === true);
    const result = await page.evaluate(() => (globalThis as any).document.querySelector('#field').capture({ commit: true, subject: { email: 'dora.commit@example.com' } }));
    expect(result).toEqual({ token: expect.stringMatching(/^cap_us/), expiresAt: expect.any(String), recordId: expect.stringMatching(/^rec_us/), channel: 'embedded_field_browser' });
    expect(await page.evaluate(() => (globalThis as any).document.querySelector('#field').value)).toBe(result.token);
    const receipt = await receiptOf(result.recordId);
    expect(validateReceipt(receipt).valid).toBe(true);
    expect(receipt.extensions.collection_channel).toBe('embedded_field_browser');
    expect(receipt.extensions.rendering_evidence.find((e: { purpose_id: string }) => e.purpose_id === 'analytics')).toMatchObject({ changed: true, trusted_gesture: true });
    expect(receipt.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id)).toEqual(['analytics', 'fraud']);

    expect(problems).toEqual([]);

    // A person homed in DE: captured here, not committed; the host learns the home country and the
    // token (it got an error and nothing to commit before), and the server commits it at DE.
    await eventually(async () => {
      const answer = await http(de.url, 'POST', '/api/v1/consent_records', {
        token: apiToken,
        body: { flow_id: flowId, subject: { email: 'dieter.commit@example.com' }, decisions: { newsletter: { decision: 'declined', default_checked: false, mandatory: false }, analytics: { decision: 'declined', default_checked: false, mandatory: false } }, captured_at: new Date(Date.now() - 60_000).toISOString() },
      });
      return answer.status === 201;
    });
    const elsewhere = await page.evaluate(() => (globalThis as any).document.querySelector('#field').capture({ commit: true, subject: { email: 'dieter.commit@example.com' } }));
    expect(elsewhere).toEqual({ token: expect.stringMatching(/^cap_us/), expiresAt: expect.any(String), homeCountry: 'DE' });
    const atHome = await http(de.url, 'POST', `/api/v1/decisions/${elsewhere.token}/authorize`, { token: apiToken, body: { subject: { email: 'dieter.commit@example.com' } } });
    expect([atHome.status, atHome.body.record_id, atHome.body.channel]).toEqual([200, expect.stringMatching(/^rec_de/), 'embedded_field']);
    // The browser logs the 421 it was answered, and nothing else went wrong.
    expect(problems).toEqual([expect.stringMatching(/status of 421 .*\/api\/v1\/captures/)]);
  });
  it('takes the field path of forms.attach from service.js: browser commit at submit, onCaptured with the record', async () => {
    expect((await http(us.url, 'PATCH', `/api/v1/applications/${applicationId}/settings`, { token: adminToken, body: { browser_commit: true } })).status).toBe(200);
    const { page, problems } = await newPage();
    const core = fieldScript.url.replace(/service-field\.js$/, 'service.js');
    const attach = `<script type="module">
      import { Service } from '${core}';
      await customElements.whenDefined('service-consent-field');
      const service = new Service({ publishableKey: '${publishableKey}' });
      try {
        service.forms.attach({ flowId: '${flowId}', form: '#signup', field: 'consent', map: {} });
      } catch (error) {
        persist('refused')({ option: error.option, message: error.message });
      }
      service.forms.attach({
        flowId: '${flowId}', form: '#signup', field: 'consent', subjectField: '#email', commit: true,
        onCaptured: persist('attached-captured'),
        onError: (error) => persist('attached-error')({ message: error.message }),
      });
      window.attachedReady = true;
    </script>`;
    await openWithNewsletterTicked(page, '/attach-field', attach);
    await page.fill('#email', 'erin.attach@example.com');
    await page.click('#submit');
    await page.waitForSelector('#submitted');

    const events = await persisted(page);
    expect(events.find((e) => e.type === 'refused')?.value).toMatchObject({ option: 'map' });
    const captured = events.find((e) => e.type === 'attached-captured')?.value as Record<string, string>;
    expect(captured).toEqual({ token: expect.stringMatching(/^cap_us/), expiresAt: expect.any(String), recordId: expect.stringMatching(/^rec_us/), channel: 'embedded_field_browser' });
    expect(events.some((e) => e.type === 'attached-error')).toBe(false);
    const submitted = pages.submissions[pages.submissions.length - 1].fields;
    expect(submitted).toMatchObject({ email: 'erin.attach@example.com', consent: captured.token, service_capture_token: captured.token });
    const receipt = await receiptOf(captured.recordId);
    expect(receipt.extensions.collection_channel).toBe('embedded_field_browser');
    expect(receipt.pii_processing.purposes.map((p: { purpose_id: string }) => p.purpose_id)).toEqual(['newsletter', 'fraud']);
    expect(problems).toEqual([]);
  });

  it('captures anew at a second submit with browser commit when the person in the form changed, though the choices did not', async () => {
    expect((await http(us.url, 'PATCH', `/api/v1/applications/${applicationId}/settings`, { token: adminToken, body: { browser_commit: true } })).status).toBe(200);
    const { page, problems } = await newPage();
    const core = fieldScript.url.replace(/service-field\.js$/, 'service.js');
    // The form posts into a frame, so the page stays (as a page whose server refused the first e-mail would).
    const attach = `<iframe name="sink" title="Result"></iframe>
    <script type="module">
      import { Service } from '${core}';
      await customElements.whenDefined('service-consent-field');
      document.querySelector('#signup').target = 'sink';
      // The field path needs no publishable key: the frame's render proof authenticates its captures.
      const service = new Service();
      service.forms.attach({ flowId: '${flowId}', form: '#signup', field: 'consent', subjectField: '#email', commit: true, onCaptured: persist('attached-captured') });
      window.attachedReady = true;
    </script>`;
    await openWithNewsletterTicked(page, '/commit-twice', attach);
    const before = pages.submissions.length;
    const submitAs = async (email: string, count: number) => {
      await page.fill('#email', email);
      await page.click('#submit');
      await eventually(async () => pages.submissions.length === before + count);
    };
    await submitAs('first.typo@example.com', 1);
    await submitAs('fiona.second@example.com', 2);

    const captured = (await persisted(page)).filter((e) => e.type === 'attached-captured').map((e) => e.value as Record<string, string>);
    expect(captured).toHaveLength(2);
    const [first, second] = pages.submissions.slice(before).map((s) => s.fields);
    expect(first).toMatchObject({ email: 'first.typo@example.com', consent: captured[0].token });
    // The second submission carries a capture committed for the person it names, not the first one's.
    expect(second).toMatchObject({ email: 'fiona.second@example.com', consent: captured[1].token });
    expect(captured[1].token).not.toBe(captured[0].token);
    expect(captured[1].recordId).not.toBe(captured[0].recordId);
    const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=fiona.second%40example.com`);
    expect(status.body.purposes).toMatchObject({ newsletter: { status: 'granted' } });
    expect(problems).toEqual([]);
  });

  it('does not reuse a capture token that expired while the page stayed open: a later submit captures anew', async () => {
    const { page, problems } = await newPage();
    await page.goto(pages.serve('/stale', formPage('Sign up', `<service-consent-field name="consent" flow="${flowId}"></service-consent-field>`, '<iframe name="sink" title="Result"></iframe>')));
    await page.evaluate(() => ((globalThis as any).document.querySelector('#signup').target = 'sink'));
    await fieldFrame(page);
    await page.fill('#email', 'hal.stale@example.com');
    const before = pages.submissions.length;
    await page.click('#submit');
    await eventually(async () => pages.submissions.length === before + 1);
    const first = pages.submissions[before].fields.consent;
    expect(first).toMatch(/^cap_us/);
    // A day and more later (the tab stayed open): the token can no longer be committed.
    await page.clock.setFixedTime(Date.now() + 25 * 3600_000);
    await page.click('#submit');
    await eventually(async () => pages.submissions.length === before + 2);
    const second = pages.submissions[before + 1].fields.consent;
    expect(second).toMatch(/^cap_us/);
    expect(second).not.toBe(first);
    expect(problems).toEqual([]);
  });

  it('shares a form with a forms.attach snippet: each flow captured once, each token in its own service_capture_token', async () => {
    const partners = (await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Partners', purposes: ['partners'], purpose_definitions: { partners: { label: 'Partner offers', basis: 'consent' } } })).body.id;
    expect((await api('POST', `/api/v1/flows/${partners}/activate`)).status).toBe(200);
    const core = fieldScript.url.replace(/service-field\.js$/, 'service.js');
    const captures: string[] = [];
    let posted = '';
    for (const order of ['snippet first', 'field first']) {
      const { page, problems } = await newPage();
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url() === `${us.url}/api/v1/captures`) captures.push(`${order}: ${request.postDataJSON().flow_id}`);
        if (request.method() === 'POST' && request.url() === `${pages.origin}/submit`) posted = request.postData() ?? '';
      });
      // A field without name: service_capture_token is its only input. The snippet attaches before or after it is in the form.
      const field = `<service-consent-field flow="${flowId}"></service-consent-field>`;
      const attach = `<script type="module">
        import { Service } from '${core}';
        const form = document.querySelector('#signup');
        const box = Object.assign(document.createElement('input'), { type: 'checkbox', id: 'partners' });
        const label = document.createElement('label');
        label.append(box, ' Partner offers');
        form.prepend(label);
        const service = new Service({ publishableKey: '${publishableKey}' });
        service.forms.attach({ flowId: '${partners}', form, map: { partners: '#partners' }, onCaptured: persist('snippet-captured') });
        ${order === 'snippet first' ? `document.querySelector('#slot').innerHTML = '${field}'; listen(document.querySelector('service-consent-field'));` : ''}
        window.attachedReady = true;
      </script>`;
      await page.goto(pages.serve(`/shared-${order.replace(' ', '-')}`, formPage('Sign up', order === 'snippet first' ? '<div id="slot"></div>' : field, attach)));
      await page.waitForFunction(() => (globalThis as any).attachedReady === true);
      await fieldFrame(page);
      await page.check('#partners');
      await page.fill('#email', 'gus.shared@example.com');
      await page.click('#submit');
      await page.waitForSelector('#submitted');

      const events = await persisted(page);
      const fieldToken = (events.find((e) => e.type === 'captured')?.value as { token: string }).token;
      const snippetToken = (events.find((e) => e.type === 'snippet-captured')?.value as { token: string }).token;
      expect(new URLSearchParams(posted).getAll('service_capture_token').sort()).toEqual([fieldToken, snippetToken].sort());
      expect(problems).toEqual([]);
    }
    expect(captures.sort()).toEqual([`field first: ${flowId}`, `field first: ${partners}`, `snippet first: ${flowId}`, `snippet first: ${partners}`].sort());
  });
});
