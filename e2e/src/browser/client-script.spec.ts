import { createHash } from 'node:crypto';
import { AddressInfo, createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { Client } from 'pg';
import { expectNoAxeViolations, launchChromium, PageServer, startPageServer, unexpectedProblems, waitForStep, WatchedPages } from '../../support/browser';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../../support/country-harness';
import { NEWSLETTER_FLOW } from '../../support/fixtures';

jest.setTimeout(90000);

interface Module {
  url: string;
  integrity: string;
}

interface RecordedEvent {
  type: string;
  value: any;
}


/** A protocol message built in the page, with a fresh UUID v4 and the time now. */
const MESSAGE_HELPER = `
  window.envelope = function (type, kind, payload, extra) {
    return Object.assign({ type: type, kind: kind, version: 2, payload: payload, ts: new Date().toISOString(), message_id: crypto.randomUUID() }, extra || {});
  };`;

/** A page of another origin that posts perfectly valid protocol messages to its parent. */
const EVIL_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Another origin</title><link rel="icon" href="data:,"></head><body><script>${MESSAGE_HELPER}
  parent.postMessage(envelope('service:complete', 'consent', { outcome: 'granted', exchange_token: 'forged-by-another-origin', completed_at: new Date().toISOString() }), '*');
  parent.postMessage(envelope('service:resize', 'consent', { height: 999 }), '*');
  document.title = 'posted';
</script></body></html>`;

/** Plain-data copies of what the client hands to callbacks (errors keep their typed fields). */
const RECORDER = `
  window.events = [];
  window.plain = function (value) {
    if (value instanceof Error) return { name: value.name, message: value.message, statusCode: value.statusCode, code: value.code, details: value.details, body: value.body, option: value.option, isServiceError: value instanceof window.ServiceErrorClass };
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  };
  window.record = function (type) { return function (value) { window.events.push({ type: type, value: window.plain(value) }); }; };
  // Callbacks that run just before the page leaves: kept in sessionStorage for the next page of this origin.
  window.persist = function (type) {
    return function (value) {
      var list = JSON.parse(sessionStorage.getItem('events') || '[]');
      list.push({ type: type, value: window.plain(value) });
      sessionStorage.setItem('events', JSON.stringify(list));
    };
  };`;

/**
 * The browser client scripts against a running country pair in headless Chromium: the core script's
 * embed, popup and redirect, a real HTML form with forms.attach (captured, committed by the server),
 * the unreachable and slow service, the message checks (origin, version, prefix, schema), the
 * service-decision element and the typed errors. One browser and one country pair for the file.
 */
describe('client scripts in a browser', () => {
  let us: RunningCountry;
  let de: RunningCountry;
  let countries: CountryPair | undefined;
  let browser: Browser;
  let pages: PageServer;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  let publishableKey: string;
  let flowId: string;
  let manifest: { entry_points: Record<string, { url: string; loads: Module[] }>; files: Array<{ name: string; integrity: string; bytes: number }> };
  const watched = new WatchedPages(() => browser);

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

  /** A page that loads an entry point with every module preloaded under its integrity, then runs `script`. */
  function scriptPage(title: string, body: string, script: string, entry = 'service.js'): string {
    const { url, loads } = manifest.entry_points[entry];
    const preloads = loads.map((m) => `<link rel="modulepreload" href="${m.url}" integrity="${m.integrity}" crossorigin="anonymous">`).join('\n');
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="icon" href="data:,">
${preloads}
<script>${RECORDER}</script>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
<script type="module">
import * as sdk from '${url}';
window.ServiceErrorClass = sdk.ServiceError;
window.sdk = sdk;
${script}
</script>
</body>
</html>`;
  }

  const newPage = () => watched.open();

  const unexpected = (problems: string[]) => unexpectedProblems(problems, { cors: true });

  async function events(page: Page): Promise<RecordedEvent[]> {
    return page.evaluate(() => (globalThis as any).events as RecordedEvent[]);
  }

  async function waitForEvent(page: Page, type: string, timeout = 15000): Promise<RecordedEvent> {
    await page.waitForFunction((wanted) => ((globalThis as any).events as RecordedEvent[]).some((e) => e.type === wanted), type, { timeout });
    return (await events(page)).find((e) => e.type === type)!;
  }

  async function activeFlow(name: string): Promise<string> {
    const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name });
    expect(created.status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id;
  }

  async function readCode(email: string): Promise<string> {
    let text = '';
    await eventually(async () => {
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
      text = mail.status === 200 && mail.body.data.length > 0 ? mail.body.data[0].text : '';
      return text !== '';
    });
    return /\b(\d{6})\b/.exec(text)![1];
  }

  /** From the start step to the decision step: start, e-mail, the mailed code. */
  async function signIn(frame: Frame, email: string): Promise<void> {
    await waitForStep(frame, 'start');
    await frame.click('#start-button');
    await waitForStep(frame, 'sign-in');
    await frame.fill('#sign-in-email', email);
    await frame.click('#sign-in-submit');
    await frame.waitForSelector('#sign-in-code', { state: 'visible' });
    await frame.fill('#sign-in-code', await readCode(email));
    await frame.click('#code-submit');
    await frame.waitForSelector('#decision-root[data-step="verifying"], #decision-root[data-step="decision"]');
    if ((await frame.getAttribute('#decision-root', 'data-step')) === 'verifying') await frame.click('#verify-continue', { timeout: 2000 }).catch(() => undefined);
    await waitForStep(frame, 'decision');
  }

  async function frameIn(page: Page, selector: string): Promise<Frame> {
    const frame = await (await page.waitForSelector(selector)).contentFrame();
    if (!frame) throw new Error(`no frame at ${selector}`);
    return frame;
  }

  const verify = (token: string, consentToken: string) => api('GET', `/api/v1/decisions/${token}/verify?consent_token=${encodeURIComponent(consentToken)}`);

  beforeAll(async () => {
    const launching = launchChromium();
    countries = await startCountryPair({ adminToken, env: { NODE_ENV: 'development' } });
    ({ us, de } = countries);
    browser = await launching;
    pages = await startPageServer();

    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    publishableKey = (await http(us.url, 'POST', `/api/v1/applications/${applicationId}/publishable_keys`, { token: adminToken })).body.key;
    const origin = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, { token: adminToken, body: { allowed_origin: { origin: 'http://localhost' } } });
    expect(origin.status).toBe(201);
    flowId = await activeFlow('Newsletter sign-up');
    manifest = (await http(us.url, 'GET', '/sdk/v1/manifest.json')).body;
  });

  afterEach(async () => {
    await watched.closeAll();
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await countries?.close();
  });

  it('serves the built scripts with CORS, a long-lived cache, ETags and the integrity the manifest lists', async () => {
    expect(Object.keys(manifest.entry_points).sort()).toEqual(['service-decision.js', 'service-field.js', 'service.js']);
    expect(manifest.entry_points['service-decision.js'].url).toBe(`${us.url}/js/v1/service-decision.js`);
    for (const path of ['/sdk/v1/service.js', '/sdk/v1/service-field.js', '/js/v1/service-decision.js']) {
      const response = await fetch(`${us.url}${path}`, { headers: { origin: pages.origin } });
      const bytes = Buffer.from(await response.arrayBuffer());
      const integrity = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-integrity')).toBe(integrity);
      expect(manifest.files.find((f) => path.endsWith(`/${f.name}`))!.integrity).toBe(integrity);
      // Self-contained: no bare import, only served siblings.
      for (const [, specifier] of bytes.toString('utf8').matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)) expect(specifier).toMatch(/^\.\/service[a-z-]*\.js$/);
      const again = await fetch(`${us.url}${path}`, { headers: { 'if-none-match': response.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
    const openapi = (await http(us.url, 'GET', '/.well-known/openapi')).body;
    for (const route of ['/sdk/v1/{file}', '/js/v1/{file}', '/sdk/v1/manifest.json', '/api/v1/flows/{flow_id}/wording', '/api/v1/templates/{template_id}/preview']) {
      expect([route, Object.keys(openapi.paths).includes(route)]).toEqual([route, true]);
    }
    expect(Object.keys(openapi.paths['/api/v1/templates/{template_id}/preview'].post.responses)).toContain('200');
    expect(Object.keys(openapi.paths['/api/v1/templates/{template_id}/preview'].post.responses)).not.toContain('501');
  });

  it('embeds a consent with consent(); the callbacks follow the frame and the token verifies server-side', async () => {
    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/embed',
        scriptPage(
          'Embed',
          '<div id="consent"></div>',
          `const service = new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} });
           window.service = service;
           service.consent({ flowId: ${JSON.stringify(flowId)}, container: '#consent', onReady: record('ready'), onStep: record('step'),
             onComplete: record('complete'), onCancel: record('cancel'), onError: record('error'), onResize: record('resize') })
             .then((d) => record('embedded')({ sessionToken: d.sessionToken, sessionId: d.session.sessionId, src: d.frame.getAttribute('src'), sandbox: d.frame.getAttribute('sandbox'), allow: d.frame.getAttribute('allow'), title: d.frame.title }), record('rejected'));`,
        ),
      ),
    );
    expect(await page.evaluate(() => typeof (globalThis as any).Service)).toBe('function');
    const embedded = (await waitForEvent(page, 'embedded')).value;
    expect(embedded).toEqual({
      sessionToken: expect.stringMatching(/^dts_us/),
      // The id the webhooks name (they never carry the token), so the integrator can match them.
      sessionId: expect.stringMatching(/^dcs_/),
      src: `${us.url}/decisions/${embedded.sessionToken}/embed`,
      sandbox: expect.stringContaining('allow-forms allow-scripts allow-same-origin'),
      allow: 'publickey-credentials-get',
      title: 'Consent decision',
    });
    const ready = await waitForEvent(page, 'ready');
    expect(ready.value).toMatchObject({ sessionToken: embedded.sessionToken, kind: 'consent', mode: 'embed', locale: 'en' });

    const frame = await frameIn(page, '#consent iframe');
    await signIn(frame, 'ada.client@example.com');
    await frame.check('input[name="purposes"][value="newsletter"]');
    await frame.click('#grant-button');
    const complete = (await waitForEvent(page, 'complete')).value;
    expect(complete).toMatchObject({ kind: 'consent', sessionToken: embedded.sessionToken, outcome: 'granted', exchangeToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });

    const recorded = await events(page);
    expect(recorded.filter((e) => e.type === 'step').map((e) => [e.value.from, e.value.to, e.value.stepIndex, e.value.totalSteps])).toEqual([
      ['pending', 'authenticating', 1, 5],
      ['authenticating', 'verifying', 2, 5],
      ['verifying', 'reviewing', 3, 5],
      ['reviewing', 'fulfilled', 4, 5],
    ]);
    const resizes = recorded.filter((e) => e.type === 'resize');
    expect(resizes.length).toBeGreaterThanOrEqual(1);
    // The frame follows the latest resize, which may come after the snapshot above: read it on every poll.
    await page.waitForFunction(() => {
      const latest = ((globalThis as any).events as RecordedEvent[]).filter((e) => e.type === 'resize').pop()!;
      return (globalThis as any).document.querySelector('#consent iframe').style.height === `${latest.value.height}px`;
    });
    expect(recorded.filter((e) => ['error', 'cancel', 'rejected'].includes(e.type))).toEqual([]);

    expect((await verify(embedded.sessionToken, complete.exchangeToken)).body).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
    // The consent.granted event (what a webhook delivers) names the session by the id the client gave.
    const client = new Client({ connectionString: us.database.url });
    await client.connect();
    try {
      await eventually(async () => {
        const { rows } = await client.query(`SELECT 1 FROM audit_chain.entries WHERE source = 'decisions' AND event_type = 'consent.granted' AND payload->>'session_id' = $1`, [embedded.sessionId]);
        return rows.length === 1;
      });
    } finally {
      await client.end();
    }
    expect(problems).toEqual([]);
  });

  it('opens a consent in a popup with popup(); the opener learns the outcome and the window closes', async () => {
    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/popup',
        scriptPage(
          'Popup',
          '<button id="open" type="button">Decide</button>',
          `const service = new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} });
           document.getElementById('open').addEventListener('click', () => {
             service.popup({ flowId: ${JSON.stringify(flowId)}, onReady: record('ready'), onStep: record('step'), onComplete: record('complete'), onCancel: record('cancel'), onError: record('error') })
               .then((p) => record('opened')({ sessionToken: p.sessionToken }), record('rejected'));
           });`,
        ),
      ),
    );
    const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('#open')]);
    await popup.waitForURL(`${us.url}/decisions/dts_*`);
    const sessionToken = (await waitForEvent(page, 'opened')).value.sessionToken;
    expect(popup.url()).toBe(`${us.url}/decisions/${sessionToken}`);

    await signIn(popup.mainFrame(), 'grace.popup@example.com');
    await popup.check('input[name="purposes"][value="newsletter"]');
    await popup.click('#grant-button');
    const complete = (await waitForEvent(page, 'complete')).value;
    expect(complete).toMatchObject({ sessionToken, outcome: 'granted' });
    await eventually(async () => popup.isClosed(), 5000);
    const recorded = await events(page);
    expect(recorded.find((e) => e.type === 'ready')!.value).toMatchObject({ sessionToken, mode: 'popup' });
    expect(recorded.filter((e) => e.type === 'step').map((e) => e.value.to)).toEqual(['authenticating', 'verifying', 'reviewing', 'fulfilled']);
    // The window closed after completing: that is not a cancellation.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await events(page)).filter((e) => ['cancel', 'error', 'rejected'].includes(e.type))).toEqual([]);
    expect((await verify(sessionToken, complete.exchangeToken)).body).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
    expect(problems).toEqual([]);
  });

  it('redirects to the hosted page with redirect(); the person lands on redirect_uri unchanged', async () => {
    const { page, problems } = await newPage();
    const landing = `${pages.origin}/landing`;
    await page.goto(
      pages.serve(
        '/redirect',
        scriptPage(
          'Redirect',
          '<button id="go" type="button">Decide</button>',
          `const service = new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} });
           document.getElementById('go').addEventListener('click', () => service.redirect({ flowId: ${JSON.stringify(flowId)}, redirectUri: ${JSON.stringify(landing)} }).catch(record('rejected')));`,
        ),
      ),
    );
    await page.click('#go');
    await page.waitForURL(`${us.url}/decisions/dts_*`);
    const sessionToken = new URL(page.url()).pathname.split('/').pop()!;
    await signIn(page.mainFrame(), 'lin.redirect@example.com');
    await page.check('input[name="purposes"][value="newsletter"]');
    await page.click('#grant-button');
    await page.waitForURL(`${pages.origin}/landing*`);
    expect(page.url()).toBe(landing);
    expect((await http(us.url, 'GET', `/api/v1/decisions/${sessionToken}`)).body).toMatchObject({ status: 'fulfilled', outcome: 'granted', delivery_mode: 'redirect' });
    expect(problems).toEqual([]);
  });

  it('captures a real form with forms.attach: the sanitised capture, the hidden token, wording and labels, then the server commits it', async () => {
    const { page, problems } = await newPage();
    const captureBodies: unknown[] = [];
    page.on('request', (request) => {
      if (request.url() === `${us.url}/api/v1/captures` && request.method() === 'POST') captureBodies.push(JSON.parse(request.postData() ?? 'null'));
    });
    await page.goto(
      pages.serve(
        '/form',
        scriptPage(
          'Sign up',
          `<form id="signup" action="/submit" method="post">
             <label for="email">E-mail</label> <input id="email" name="email" type="email" required>
             <label for="password">Password</label> <input id="password" name="password" type="password">
             <label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> <span id="newsletter-label">Newsletter</span></label>
             <label><input id="analytics" type="checkbox" name="analytics" value="yes"> <span id="analytics-label">Analytics (old text)</span></label>
             <label><input id="fraud" type="checkbox" name="fraud" value="yes" checked> <span id="fraud-label">We look for fraud, honestly</span></label>
             <button id="submit" type="submit" name="action" value="sign-up">Sign up</button>
           </form>`,
          `const service = new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} });
           sessionStorage.clear();
           const attachment = service.forms.attach({
             flowId: ${JSON.stringify(flowId)}, form: '#signup', subjectField: '#email',
             map: { newsletter: '#newsletter', analytics: '#analytics', fraud: '#fraud' },
             labels: { newsletter: '#newsletter-label', fraud: '#fraud-label' },
             wording: { analytics: '#analytics-label' },
             onCaptured: persist('captured'), onError: persist('error'),
           });
           attachment.ready.then(() => record('wording')({}), record('wording-failed'));`,
        ),
      ),
    );
    await waitForEvent(page, 'wording');
    // The published wording replaced the page's own text; the control inside the label stayed.
    expect(await page.textContent('#analytics-label')).toBe('Usage analytics');
    await page.fill('#email', 'ruth.form@example.com');
    await page.fill('#password', 'hunter2-secret');
    await page.check('#newsletter');
    await page.click('#submit');
    await page.waitForSelector('#submitted');

    expect(pages.submissions).toHaveLength(1);
    const fields = pages.submissions[0].fields;
    expect(fields).toEqual({
      email: 'ruth.form@example.com',
      password: 'hunter2-secret',
      newsletter: 'yes',
      fraud: 'yes',
      action: 'sign-up',
      service_capture_token: expect.stringMatching(/^cap_us[0-9a-z]{30}$/),
    });
    // One capture, with the controls and label digests only: nothing else the person typed.
    expect(captureBodies).toEqual([
      {
        flow_id: flowId,
        channel: 'form_capture',
        decisions: {
          newsletter: { decision: 'granted', default_checked: false, mandatory: false },
          analytics: { decision: 'declined', default_checked: false, mandatory: false },
          fraud: { decision: 'granted', default_checked: true, mandatory: false },
        },
        labels: { newsletter: sha256('Newsletter'), fraud: sha256('We look for fraud, honestly'), analytics: sha256('Usage analytics') },
      },
    ]);
    expect(JSON.stringify(captureBodies)).not.toMatch(/ruth|hunter2/);
    const persisted: RecordedEvent[] = JSON.parse((await page.evaluate(() => (globalThis as any).sessionStorage.getItem('events'))) ?? '[]');
    expect(persisted).toEqual([
      { type: 'captured', value: { token: fields.service_capture_token, expiresAt: expect.any(String), wordingVerdict: { newsletter: 'match', analytics: 'match', fraud: 'drift' } } },
    ]);

    // The organisation's server commits the capture with the person from the submitted form.
    const committed = await api('POST', `/api/v1/decisions/${fields.service_capture_token}/authorize`, { subject: { email: fields.email }, suppress_receipt: true });
    expect(committed.status).toBe(200);
    expect(committed.body).toEqual({ status: 'granted', record_id: expect.stringMatching(/^rec_us/), channel: 'form_capture' });
    const status = await api('GET', `/api/v1/applications/${applicationId}/consent_status?subject[email]=${encodeURIComponent(fields.email)}`);
    expect(status.body.purposes).toMatchObject({ newsletter: { status: 'granted' }, analytics: { status: 'declined' }, fraud: { status: 'noticed' } });
    expect(problems).toEqual([]);
  });

  it('commits in the browser with commit: true once the application allows it (subjectField is then sent)', async () => {
    const { applicationId: shop, apiToken: shopToken } = await applicationWithToken(us, adminToken, { name: 'Shop', environment: 'sandbox' });
    const as = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: adminToken, body });
    const shopKey = (await as('POST', `/api/v1/applications/${shop}/publishable_keys`)).body.key;
    await as('POST', `/api/v1/applications/${shop}/allowed_origins`, { allowed_origin: { origin: 'http://localhost' } });
    expect((await as('PATCH', `/api/v1/applications/${shop}/settings`, { browser_commit: true })).status).toBe(200);
    const shopFlow = (await http(us.url, 'POST', `/api/v1/applications/${shop}/flows`, { token: shopToken, body: { ...NEWSLETTER_FLOW, name: 'Checkout' } })).body.id;
    await http(us.url, 'POST', `/api/v1/flows/${shopFlow}/activate`, { token: shopToken });

    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/commit',
        scriptPage(
          'Checkout',
          `<form id="checkout" action="/submit" method="post">
             <label for="email">E-mail</label> <input id="email" name="email" type="email">
             <label for="customer">Customer number</label> <input id="customer" name="customer">
             <label><input id="newsletter" type="checkbox" name="newsletter"> Newsletter</label>
             <label><input id="analytics" type="checkbox" name="analytics"> Usage analytics</label>
             <button id="submit" type="submit">Buy</button>
           </form>`,
          `sessionStorage.clear();
           new sdk.Service({ publishableKey: ${JSON.stringify(shopKey)} }).forms.attach({
             flowId: ${JSON.stringify(shopFlow)}, form: '#checkout', map: { newsletter: '#newsletter', analytics: '#analytics' },
             subjectField: '#email', externalIdField: '#customer', commit: true, onCaptured: persist('captured'), onError: persist('error'),
           });
           record('attached')({});`,
        ),
      ),
    );
    await waitForEvent(page, 'attached');
    await page.fill('#email', 'otto.commit@example.com');
    await page.fill('#customer', 'crm-42');
    await page.check('#analytics');
    await page.click('#submit');
    await page.waitForSelector('#submitted');
    const persisted: RecordedEvent[] = JSON.parse((await page.evaluate(() => (globalThis as any).sessionStorage.getItem('events'))) ?? '[]');
    expect(persisted).toEqual([
      { type: 'captured', value: { token: expect.stringMatching(/^cap_us/), expiresAt: expect.any(String), recordId: expect.stringMatching(/^rec_us/), channel: 'form_capture_browser' } },
    ]);
    const status = await http(us.url, 'GET', `/api/v1/applications/${shop}/consent_status?subject[external_id]=crm-42`, { token: shopToken });
    expect(status.body.purposes).toMatchObject({ newsletter: { status: 'declined' }, analytics: { status: 'granted' } });
    expect(pages.submissions.at(-1)!.fields.service_capture_token).toBe(persisted[0].value.token);
    expect(problems).toEqual([]);
  });

  it('still submits the form when the service is unreachable or too slow, and onError fires', async () => {
    // A port nothing listens on, and a server that accepts connections and never answers.
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const sockets: Socket[] = [];
    const silent: TcpServer = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;

    try {
      for (const [path, baseUrl, expected] of [
        ['/unreachable', `http://127.0.0.1:${closedPort}`, 'ServiceConnectionError'],
        ['/slow', `http://127.0.0.1:${silentPort}`, 'ServiceTimeoutError'],
      ]) {
        const before = pages.submissions.length;
        const { page, problems } = await newPage();
        await page.goto(
          pages.serve(
            path,
            scriptPage(
              'Sign up',
              `<form id="signup" action="/submit" method="post">
                 <label for="email">E-mail</label> <input id="email" name="email" type="email">
                 <label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Newsletter</label>
                 <label><input id="analytics" type="checkbox" name="analytics" value="yes"> Usage analytics</label>
                 <button id="submit" type="submit">Sign up</button>
               </form>`,
              `sessionStorage.clear();
               new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)}, baseUrl: ${JSON.stringify(baseUrl)}, timeout: 800 }).forms.attach({
                 flowId: ${JSON.stringify(flowId)}, form: '#signup', map: { newsletter: '#newsletter', analytics: '#analytics' },
                 onCaptured: persist('captured'), onError: persist('error'),
               });
               record('attached')({});`,
            ),
          ),
        );
        await waitForEvent(page, 'attached');
        await page.fill('#email', 'offline@example.com');
        await page.check('#newsletter');
        const started = Date.now();
        await page.click('#submit');
        await page.waitForSelector('#submitted');
        expect(Date.now() - started).toBeLessThan(5000);
        expect(pages.submissions.length).toBe(before + 1);
        expect(pages.submissions.at(-1)!.fields).toEqual({ email: 'offline@example.com', newsletter: 'yes', service_capture_token: '' });
        const persisted: RecordedEvent[] = JSON.parse((await page.evaluate(() => (globalThis as any).sessionStorage.getItem('events'))) ?? '[]');
        expect(persisted).toEqual([{ type: 'error', value: expect.objectContaining({ name: expected, isServiceError: true, code: expected === 'ServiceTimeoutError' ? 'timeout' : 'connection_error' }) }]);
        expect(unexpected(problems)).toEqual([]);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  /** A consent() whose frame (the session's real embed URL) is replaced by `framePage`, served from the flow host. */
  /** `routes`: more routes of the context, registered before the page loads (a frame may navigate to one at once). */
  async function withForgedFrame(path: string, framePage: string, routes?: (context: BrowserContext) => Promise<unknown>): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
    const { page, context, problems } = await newPage();
    await context.route(`${us.url}/decisions/*/embed`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: framePage }));
    await routes?.(context);
    await page.goto(
      pages.serve(
        path,
        scriptPage(
          'Embed',
          '<div id="consent"></div>',
          `new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} }).consent({ flowId: ${JSON.stringify(flowId)}, container: '#consent',
             onReady: record('ready'), onStep: record('step'), onComplete: record('complete'), onCancel: record('cancel'), onError: record('error'), onResize: record('resize') })
             .then(() => record('embedded')({}), record('rejected'));`,
        ),
      ),
    );
    await waitForEvent(page, 'embedded');
    return { page, context, problems };
  }

  it('ignores a message from another origin, even from its own frame once it navigated away', async () => {
    const framePage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frame</title></head><body><script>${MESSAGE_HELPER}
      parent.postMessage(envelope('service:resize', 'consent', { height: 321 }), '*');
      setTimeout(function () { location.href = ${JSON.stringify(`${pages.otherOrigin}/evil`)}; }, 100);
    </script></body></html>`;
    // Fulfilled like the forged frame: Chromium treats fulfilled documents as public and would refuse
    // their navigation to loopback. Registered before the page loads: the frame goes there 100 ms in.
    const { page, problems } = await withForgedFrame('/other-origin', framePage, (context) =>
      context.route(`${pages.otherOrigin}/evil`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: EVIL_PAGE })),
    );
    await waitForEvent(page, 'resize');
    await eventually(async () => page.frames().some((f) => f.url() === `${pages.otherOrigin}/evil`));
    const evil = page.frames().find((f) => f.url() === `${pages.otherOrigin}/evil`)!;
    await evil.waitForFunction(() => (globalThis as any).document.title === 'posted');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The flow host's message was taken; the other origin's complete and resize were not.
    expect(await events(page)).toEqual([
      { type: 'embedded', value: {} },
      { type: 'resize', value: expect.objectContaining({ height: 321 }) },
    ]);
    expect(await page.evaluate(() => (globalThis as any).document.querySelector('#consent iframe').style.height)).toBe('321px');
    expect(problems).toEqual([]);
  });

  it('ignores messages of version 1, without the service: prefix, failing the schema or of another kind', async () => {
    const framePage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frame</title></head><body><script>${MESSAGE_HELPER}
      var done = { outcome: 'granted', exchange_token: 'forged', completed_at: new Date().toISOString() };
      parent.postMessage(envelope('service:complete', 'consent', done, { version: 1 }), '*');
      parent.postMessage(envelope('complete', 'consent', done), '*');
      parent.postMessage(envelope('consent:complete', 'consent', done), '*');
      parent.postMessage(envelope('service:complete', 'consent', Object.assign({ claims: {} }, done)), '*');
      parent.postMessage(envelope('service:complete', 'consent', done, { message_id: 'not-a-uuid' }), '*');
      parent.postMessage(envelope('service:complete', 'approval', { outcome: 'approved', exchange_token: 'forged', completed_at: done.completed_at }), '*');
      parent.postMessage(JSON.stringify(envelope('service:complete', 'consent', done)), '*');
      parent.postMessage(envelope('service:complete', 'consent', { outcome: 'granted', exchange_token: 'the-real-one', completed_at: done.completed_at }), '*');
    </script></body></html>`;
    const { page, problems } = await withForgedFrame('/bad-messages', framePage);
    await waitForEvent(page, 'complete');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const completes = (await events(page)).filter((e) => e.type !== 'embedded');
    expect(completes).toEqual([{ type: 'complete', value: expect.objectContaining({ outcome: 'granted', exchangeToken: 'the-real-one' }) }]);
    expect(problems).toEqual([]);
  });

  it('completes an approval in the service-decision element, which re-dispatches the messages as DOM events', async () => {
    const created = await api('POST', '/api/v1/decisions', {
      kind: 'approval',
      approval: { title: 'Refund order 8812', action: 'refunds.create', trigger: 'value', value: { amount: 4999, currency: 'EUR' } },
      delivery_mode: 'embed',
      embed_origin: pages.origin,
    });
    expect(created.status).toBe(201);
    const token = created.body.session_token;
    const { loads } = manifest.entry_points['service-decision.js'];
    const entry = loads[0];
    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/element',
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Element</title><link rel="icon" href="data:,">
         ${loads.slice(1).map((m) => `<link rel="modulepreload" href="${m.url}" integrity="${m.integrity}" crossorigin="anonymous">`).join('')}
         <script>${RECORDER}</script>
         <script type="module" src="${entry.url}" integrity="${entry.integrity}" crossorigin="anonymous"></script></head>
         <body><main><h1>Approve</h1><service-decision id="decision" token="${token}"></service-decision></main>
         <script>
           ['service:ready', 'service:state', 'service:complete', 'service:cancel', 'service:error'].forEach(function (type) {
             document.getElementById('decision').addEventListener(type, function (event) { window.events.push({ type: event.type, value: event.detail }); });
           });
         </script></body></html>`,
      ),
    );
    const ready = await waitForEvent(page, 'service:ready');
    expect(ready.value).toMatchObject({ type: 'service:ready', kind: 'approval', version: 2, payload: { session_token: token, mode: 'embed' } });
    expect(await page.evaluate(() => typeof (globalThis as any).customElements.get('service-decision'))).toBe('function');

    const frame = await frameIn(page, 'service-decision iframe');
    expect(await page.$eval('service-decision iframe', (f: any) => [f.getAttribute('sandbox'), f.getAttribute('allow'), f.getAttribute('src')])).toEqual([
      expect.stringContaining('allow-forms allow-scripts allow-same-origin'),
      'publickey-credentials-get',
      `${us.url}/decisions/${token}/embed`,
    ]);
    await signIn(frame, 'approver.element@example.com');
    await frame.click('#approve-button');
    const complete = (await waitForEvent(page, 'service:complete')).value;
    expect(complete).toMatchObject({ type: 'service:complete', kind: 'approval', version: 2, payload: { outcome: 'approved' } });
    expect((await events(page)).filter((e) => e.type === 'service:state').map((e) => e.value.payload.to)).toEqual(['authenticating', 'verifying', 'reviewing', 'fulfilled']);
    expect((await verify(token, complete.payload.exchange_token)).body).toEqual({ valid: true, status: 'fulfilled', outcome: 'approved' });
    expect(problems).toEqual([]);

    // The element's cancel() names the decision's kind, which it learned from the frame.
    const another = (await api('POST', '/api/v1/decisions', {
      kind: 'approval',
      approval: { title: 'Refund order 8813', action: 'refunds.create', trigger: 'value', value: { amount: 10, currency: 'EUR' } },
      delivery_mode: 'embed',
      embed_origin: pages.origin,
    })).body.session_token;
    await page.evaluate(() => ((globalThis as any).events.length = 0));
    await page.evaluate((next) => (globalThis as any).document.getElementById('decision').setAttribute('token', next), another);
    await waitForEvent(page, 'service:ready');
    const second = await frameIn(page, 'service-decision iframe');
    await second.evaluate(() => {
      const scope = globalThis as any;
      scope.received = [];
      scope.addEventListener('message', (event: { data: unknown }) => scope.received.push(event.data));
    });
    await page.evaluate(() => (globalThis as any).document.getElementById('decision').cancel('host_stop'));
    const cancelled = (await waitForEvent(page, 'service:cancel')).value;
    expect(cancelled).toMatchObject({ kind: 'approval', payload: { reason: 'host_stop', cancelled_by: 'host' } });
    expect(await second.evaluate(() => (globalThis as any).received.map((m: { type: string; kind: string }) => [m.type, m.kind]))).toEqual([['service:cancel', 'approval']]);
  });

  it('raises typed errors: 4xx answers with statusCode and body, and usage errors naming the option', async () => {
    const { page, problems } = await newPage();
    await page.goto(
      pages.serve(
        '/errors',
        scriptPage(
          'Errors',
          '<div id="consent"></div>',
          `const unknownFlow = 'flw_dev_0000000000000000';
           const service = new sdk.Service({ publishableKey: ${JSON.stringify(publishableKey)} });
           const settle = (type, promise) => promise.then(record(type + ':resolved'), record(type));
           const sync = (type, fn) => { try { fn(); record(type + ':returned')({}); } catch (error) { record(type)(error); } };
           (async () => {
             await settle('unknown-flow', service.createSession({ flowId: unknownFlow }));
             await settle('unknown-flow-instance', service.createSession({ flowId: unknownFlow }).catch((e) => { throw Object.assign(new Error('checked'), { name: [e instanceof sdk.InvalidRequestError, e instanceof sdk.ServiceError, e instanceof sdk.NotFoundError].join() }); }));
             await settle('consent-unknown-flow', service.consent({ flowId: unknownFlow, container: '#consent', onError: record('consent-onError') }));
             await settle('bad-key', new sdk.Service({ publishableKey: 'pk_test_NotAKeyOfAnyApplication0000000' }).createSession({ flowId: ${JSON.stringify(flowId)} }));
             await settle('api-key', new sdk.Service({ apiKey: ${JSON.stringify(apiToken)} }).createSession({ flowId: ${JSON.stringify(flowId)} }));
             await settle('exchange', service.exchange({ sessionToken: 'dts_us000', consentToken: 'x' }));
             sync('bad-option', () => new sdk.Service({ publishableKey: 'sk_live_nope' }));
             sync('typo', () => new sdk.Service({ publishablekey: 'pk_test_x' }));
             sync('field', () => service.forms.attach({ flowId: unknownFlow, form: document.body.appendChild(document.createElement('form')), field: 'consent' }));
             record('done')({});
           })();`,
        ),
      ),
    );
    await waitForEvent(page, 'done');
    const byType = Object.fromEntries((await events(page)).map((e) => [e.type, e.value]));
    expect(byType['unknown-flow']).toEqual({
      name: 'InvalidRequestError',
      isServiceError: true,
      statusCode: 422,
      code: 'validation_failed',
      message: 'The flow does not exist',
      details: [{ field: 'flow_id', reason: 'no such flow in this application' }],
      body: { message: 'The flow does not exist', code: 'validation_failed', details: [{ field: 'flow_id', reason: 'no such flow in this application' }], request_id: expect.any(String) },
    });
    expect(byType['unknown-flow-instance'].name).toBe('true,true,false');
    expect(byType['consent-unknown-flow']).toMatchObject({ name: 'InvalidRequestError', statusCode: 422 });
    expect(byType['consent-onError']).toMatchObject({ name: 'InvalidRequestError', statusCode: 422 });
    expect(byType['bad-key']).toMatchObject({ name: 'AuthenticationError', statusCode: 401, code: 'unauthenticated', isServiceError: true });
    expect(byType['api-key']).toMatchObject({ name: 'ServiceConfigurationError', code: 'api_key_in_browser', option: 'apiKey' });
    expect(byType.exchange).toMatchObject({ name: 'ServiceConfigurationError', code: 'server_side_only' });
    expect(byType['bad-option']).toMatchObject({ name: 'ServiceConfigurationError', option: 'publishableKey' });
    expect(byType.typo).toMatchObject({ name: 'ServiceConfigurationError', option: 'publishablekey' });
    expect(byType.field).toMatchObject({ name: 'ServiceConfigurationError', option: 'field', message: expect.stringContaining('names no <service-consent-field') });
    expect(await page.$$('#consent iframe')).toHaveLength(0);
    expect(unexpected(problems)).toEqual([]);
  });

  it('previews a template with the API key on the service origin: the frame shows the preview page, setDevice and setTheme reload it, destroy removes it', async () => {
    const { page, context, problems } = await newPage();
    const template = await api('POST', `/api/v1/flows/${flowId}/templates`);
    expect(template.status).toBe(201);
    const templateId: string = template.body.id;
    // Internal tooling runs on the service's own origin (API tokens are never an allowed CORS header).
    const toolUrl = `${us.url}/__tooling/preview`;
    const html = scriptPage(
      'Preview',
      '<div id="preview"></div><div id="unknown"></div>',
      `const service = new sdk.Service({ apiKey: ${JSON.stringify(apiToken)} });
       const preview = service.previewTemplate({ templateId: ${JSON.stringify(templateId)}, container: '#preview', onError: record('onError') });
       window.preview = preview;
       preview.ready.then(record('ready'), record('rejected'));
       service.previewTemplate({ templateId: 'tpl_us0123456789abcdefghij', container: '#unknown', onError: record('unknownError') }).ready.catch(() => undefined);`,
    );
    await context.route(toolUrl, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }));
    const frameRequests: string[] = [];
    page.on('request', (request) => {
      if (request.frame() !== page.mainFrame()) frameRequests.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    await page.goto(toolUrl);
    await waitForEvent(page, 'ready');
    // A template the service does not know rejects with the typed error.
    expect((await waitForEvent(page, 'unknownError')).value).toMatchObject({ name: 'NotFoundError', statusCode: 404, code: 'not_found' });

    const src = () => page.evaluate(() => (globalThis as any).preview.frame.getAttribute('src') as string);
    const first = new URL(await src());
    expect(first.origin).toBe(us.url);
    expect(first.pathname).toMatch(new RegExp(`^/preview/${templateId}\\.dl\\.\\d{10}\\.[A-Za-z0-9_-]{43}$`));
    expect(Object.fromEntries(first.searchParams)).toEqual({ device: 'desktop', theme: 'light' });
    const frame = await frameIn(page, '#preview iframe');
    await frame.waitForSelector('html[data-device="desktop"][data-theme="light"]');
    expect(await frame.textContent('#preview-banner-title')).toBe('Preview – nothing is recorded');
    expect(await frame.textContent('#decision-title')).toBe('Newsletter sign-up');
    expect(await frame.isDisabled('#purpose-newsletter')).toBe(true);
    expect(await frame.isDisabled('#grant-button')).toBe(true);
    const look = () =>
      frame.evaluate(() => {
        const doc = (globalThis as any).document;
        const view = doc.defaultView;
        return { background: view.getComputedStyle(doc.body).backgroundColor, mainWidth: view.getComputedStyle(doc.querySelector('.hp-main')).maxWidth };
      });
    expect(await look()).toEqual({ background: 'rgb(255, 255, 255)', mainWidth: '672px' });
    await expectNoAxeViolations(frame, 'the template preview (light, desktop)');

    await page.evaluate(() => (globalThis as any).preview.setDevice('mobile'));
    expect(Object.fromEntries(new URL(await src()).searchParams)).toEqual({ device: 'mobile', theme: 'light' });
    await frame.waitForSelector('html[data-device="mobile"][data-theme="light"]');
    expect(await page.evaluate(() => (globalThis as any).preview.frame.style.width)).toBe('390px');
    expect(await look()).toEqual({ background: 'rgb(255, 255, 255)', mainWidth: '390px' });

    await page.evaluate(() => (globalThis as any).preview.setTheme('dark'));
    expect(Object.fromEntries(new URL(await src()).searchParams)).toEqual({ device: 'mobile', theme: 'dark' });
    await frame.waitForSelector('html[data-device="mobile"][data-theme="dark"]');
    expect(await look()).toEqual({ background: 'rgb(18, 19, 23)', mainWidth: '390px' });
    expect(await frame.textContent('#preview-banner-title')).toBe('Preview – nothing is recorded');
    await expectNoAxeViolations(frame, 'the template preview (dark, mobile)');

    const handle = await page.evaluate(() => {
      const preview = (globalThis as any).preview;
      const results: unknown[] = [preview.frame.getAttribute('sandbox'), preview.frame.dataset.theme];
      try {
        preview.setDevice('tablet');
      } catch (error: any) {
        results.push([error.name, error.option]);
      }
      preview.destroy();
      results.push((globalThis as any).document.querySelectorAll('#preview iframe').length);
      return results;
    });
    expect(handle).toEqual([expect.stringContaining('allow-forms allow-scripts allow-same-origin'), 'dark', ['ServiceConfigurationError', 'device'], 0]);
    // The preview page asked for nothing but itself and its stylesheet: no API call, no session.
    expect([...new Set(frameRequests)].sort()).toEqual(['GET /assets/hosted/v1/participant.css', `GET ${first.pathname}`]);
    expect((await events(page)).filter((e) => ['rejected', 'onError'].includes(e.type))).toEqual([]);
    expect(unexpected(problems)).toEqual([]);
  });

  it('serves the consent field entry script, which defines the service-consent-field element (e2e/src/browser/consent-field.spec.ts tests it)', async () => {
    const { page, problems } = await newPage();
    const field = manifest.entry_points['service-field.js'].loads[0];
    await page.goto(
      pages.serve(
        '/field',
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Field</title><link rel="icon" href="data:,">
         <script type="module" src="${field.url}" integrity="${field.integrity}" crossorigin="anonymous"></script></head>
         <body><main><h1>Field</h1></main></body></html>`,
      ),
    );
    await page.waitForFunction(() => (globalThis as any).customElements.get('service-consent-field') !== undefined);
    expect(problems).toEqual([]);
  });

  it('reads the published wording with the publishable key from an allowed origin only', async () => {
    const asBrowser = (id: string, origin: string, key = publishableKey) => http(us.url, 'GET', `/api/v1/flows/${id}/wording`, { headers: { 'x-publishable-key': key, origin } });
    const wording = await asBrowser(flowId, pages.origin);
    expect(wording.status).toBe(200);
    expect(wording.body).toEqual({
      flow_id: flowId,
      version: 1,
      locale: 'en',
      title: null,
      purposes: {
        newsletter: { label: 'Newsletter', description: null, basis: 'consent', mechanism: 'explicit', required: false, takes_decision: true },
        analytics: { label: 'Usage analytics', description: null, basis: 'consent', mechanism: 'explicit', required: false, takes_decision: true },
        fraud: { label: 'Fraud prevention', description: null, basis: 'legitimate_interest', mechanism: 'opt_out', required: false, takes_decision: true },
        billing: { label: 'Billing', description: null, basis: 'contract', mechanism: 'notice', required: false, takes_decision: false },
      },
    });
    expect((await api('GET', `/api/v1/flows/${flowId}/wording`)).body).toEqual(wording.body);
    expect((await asBrowser(flowId, 'https://elsewhere.example')).status).toBe(403);
    const draft = (await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...NEWSLETTER_FLOW, name: 'Draft' })).body.id;
    expect((await asBrowser(draft, pages.origin)).body).toEqual({ message: 'Flow was not found', code: 'not_found', request_id: expect.any(String) });
    const other = (await http(us.url, 'POST', '/api/v1/applications', { token: adminToken, body: { name: 'Other', environment: 'sandbox' } })).body;
    await http(us.url, 'POST', `/api/v1/applications/${other.id}/allowed_origins`, { token: adminToken, body: { allowed_origin: { origin: 'http://localhost' } } });
    const otherKey = (await http(us.url, 'POST', `/api/v1/applications/${other.id}/publishable_keys`, { token: adminToken })).body.key;
    expect((await asBrowser(flowId, pages.origin, otherKey)).status).toBe(404);
    // Served from every country: flows are configuration.
    await eventually(async () => (await http(de.url, 'GET', `/api/v1/flows/${flowId}/wording`, { headers: { 'x-publishable-key': publishableKey, origin: pages.origin } })).status === 200);
    expect((await http(de.url, 'GET', `/api/v1/flows/${flowId}/wording`, { headers: { 'x-publishable-key': publishableKey, origin: pages.origin } })).body).toEqual(wording.body);
  });
});
