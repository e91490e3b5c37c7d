import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import * as ts from 'typescript';
import { labelDigest } from '@dcr/domain';
import { launchChromium, PageServer, startPageServer, WatchedPages } from '../../support/browser';

jest.setTimeout(60000);

/*
 * forms.attach (the capture snippet) in headless Chromium, against the TypeScript sources of
 * libs/client-sdk (transpiled here, so no build is needed) and a stand-in for POST /api/v1/captures:
 * several attachments on one form, and what "shown ticked by default" attests. The whole path against
 * a running country is in client-script.spec.ts.
 */

const SOURCES = join(__dirname, '..', '..', '..', 'libs', 'client-sdk', 'src');
const NEWSLETTER = 'flw_dev_0123456789abcdef';
const PARTNERS = 'flw_dev_fedcba9876543210';

/** The client scripts as the browser loads them: each module of src/, transpiled to an ES module. */
function transpiledModules(): Map<string, string> {
  const modules = new Map<string, string>();
  for (const file of readdirSync(SOURCES).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))) {
    const output = ts.transpileModule(readFileSync(join(SOURCES, file), 'utf8'), {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.ES2020, isolatedModules: true },
      fileName: file,
    });
    modules.set(file.replace(/\.ts$/, '.js'), output.outputText);
  }
  return modules;
}

interface Capture {
  body: any;
  token: string;
}

describe('forms.attach in a browser', () => {
  let browser: Browser;
  let pages: PageServer;
  let modules: Map<string, string>;
  const watched = new WatchedPages(() => browser);

  beforeAll(async () => {
    modules = transpiledModules();
    [browser, pages] = await Promise.all([launchChromium(), startPageServer()]);
  });

  afterEach(async () => {
    await watched.closeAll();
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
  });

  /**
   * A page with `form` and `script` (which has `sdk`, the core module, and `service`, a client whose
   * base URL is the page's origin), the scripts served from the sources, and the capture endpoint
   * answered by `answer` (by default a fresh capture token). Form posts are recorded with every value.
   */
  async function open(
    path: string,
    form: string,
    script: string,
    answer: (route: Route, body: any) => Promise<void> | void = () => undefined,
  ): Promise<{ page: Page; context: BrowserContext; problems: string[]; captures: Capture[]; posts: URLSearchParams[]; events: () => Promise<Array<{ type: string; value: any }>> }> {
    const { page, context, problems } = await watched.open();
    const captures: Capture[] = [];
    const posts: URLSearchParams[] = [];
    await context.route(`${pages.origin}/client-sdk/*.js`, (route) => {
      const name = new URL(route.request().url()).pathname.split('/').pop()!;
      const source = modules.get(name);
      return source === undefined ? route.fulfill({ status: 404, body: 'Not found' }) : route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: source });
    });
    await context.route(`${pages.origin}/api/v1/captures`, async (route) => {
      const body = JSON.parse(route.request().postData() ?? 'null');
      const token = `cap_us${String(captures.length + 1).padStart(30, '0')}`;
      captures.push({ body, token });
      await answer(route, body);
      // Whatever the answer did not handle gets the service's answer.
      await route
        .fulfill({ status: 201, contentType: 'application/json', body: JSON.stringify({ capture_token: token, expires_at: new Date(Date.now() + 3600_000).toISOString() }) })
        .catch(() => undefined);
    });
    // The flow's published wording (forms.attach `wording`).
    await context.route(`${pages.origin}/api/v1/flows/*/wording`, (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ purposes: { newsletter: { label: 'Monthly newsletter' } } }) }),
    );
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url() === `${pages.origin}/submit`) posts.push(new URLSearchParams(request.postData() ?? ''));
    });
    await page.goto(
      pages.serve(
        path,
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign up</title><link rel="icon" href="data:,">
         <script>window.events = []; window.record = (type) => (value) => window.events.push({ type, value: value instanceof Error ? { name: value.name, message: value.message } : value });</script>
         </head><body><main><h1>Sign up</h1>${form}</main>
         <script type="module">
           import * as sdk from '/client-sdk/service.js';
           const service = new sdk.Service({ publishableKey: 'pk_test_FormsCapture0000000000', baseUrl: location.origin, timeout: 2000, maxRetries: 0 });
           ${script}
           record('attached')(null);
         </script></body></html>`,
      ),
    );
    const events = () => page.evaluate(() => (globalThis as any).events as Array<{ type: string; value: any }>);
    await page.waitForFunction(() => (globalThis as any).events?.some((e: { type: string }) => e.type === 'attached'));
    return { page, context, problems, captures, posts, events };
  }

  /** Submits, then waits for the form to land on /submit (or gives up, for the assertions to say why). */
  async function submit(page: Page): Promise<void> {
    await page.click('#submit');
    await page.waitForSelector('#submitted', { timeout: 5000 }).catch(() => undefined);
  }

  const FORM = `<form id="signup" action="/submit" method="post">
      <label for="email">E-mail</label> <input id="email" name="email" type="email" value="ada@example.com">
      <label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Newsletter</label>
      <label><input id="partners" type="checkbox" name="partners" value="yes"> Partner offers</label>
      <button id="submit" type="submit" name="action" value="sign-up">Sign up</button>
    </form>`;

  it('captures each flow attached to one form once, then submits the form once with every token', async () => {
    const { page, problems, captures, posts, events } = await open(
      '/two-flows',
      FORM,
      `service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' }, onCaptured: record('captured'), onError: record('error') });
       service.forms.attach({ flowId: '${PARTNERS}', form: '#signup', map: { partners: '#partners' }, onCaptured: record('captured'), onError: record('error') });`,
    );
    await page.check('#newsletter');
    await submit(page);

    expect(captures.length).toBe(2);
    expect(captures.map((c) => c.body.flow_id).sort()).toEqual([NEWSLETTER, PARTNERS].sort());
    expect(captures.find((c) => c.body.flow_id === NEWSLETTER)!.body.decisions).toEqual({ newsletter: { decision: 'granted', default_checked: false, mandatory: false } });
    expect(captures.find((c) => c.body.flow_id === PARTNERS)!.body.decisions).toEqual({ partners: { decision: 'declined', default_checked: false, mandatory: false } });
    expect(posts).toHaveLength(1);
    // One token per flow, each in its own service_capture_token input; the submitter kept.
    expect(posts[0].getAll('service_capture_token').sort()).toEqual(captures.map((c) => c.token).sort());
    expect(posts[0].get('action')).toBe('sign-up');
    expect(problems).toEqual([]);
  });

  it('submits a form with several attachments once even when one capture fails, the other token kept', async () => {
    const { page, problems, captures, posts } = await open(
      '/one-fails',
      FORM,
      `service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' }, onCaptured: record('captured'), onError: record('error') });
       service.forms.attach({ flowId: '${PARTNERS}', form: '#signup', map: { partners: '#partners' }, onCaptured: record('captured'), onError: record('error') });`,
      (route, body) => (body.flow_id === PARTNERS ? route.abort('connectionrefused') : undefined),
    );
    await submit(page);
    expect(captures.map((c) => c.body.flow_id).sort()).toEqual([NEWSLETTER, PARTNERS].sort());
    expect(posts).toHaveLength(1);
    expect(posts[0].getAll('service_capture_token').sort()).toEqual(['', captures.find((c) => c.body.flow_id === NEWSLETTER)!.token]);
    expect(problems.filter((p) => !/Failed to load resource|net::ERR_/.test(p))).toEqual([]);
  });

  it('after detach, the remaining attachment alone captures; with none left the form goes uncaptured', async () => {
    const { page, captures, posts } = await open(
      '/detach',
      FORM,
      `const first = service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' } });
       const second = service.forms.attach({ flowId: '${PARTNERS}', form: '#signup', map: { partners: '#partners' } });
       first.detach();
       window.second = second;`,
    );
    await submit(page);
    expect(captures.map((c) => c.body.flow_id)).toEqual([PARTNERS]);
    expect(posts).toHaveLength(1);
    expect(posts[0].getAll('service_capture_token')).toEqual([captures[0].token]);

    await page.goBack();
    await page.waitForFunction(() => (globalThis as any).second !== undefined);
    await page.evaluate(() => (globalThis as any).second.detach());
    await submit(page);
    expect(captures).toHaveLength(1);
    expect(posts).toHaveLength(2);
  });

  it('with one attachment: a service that does not answer in time still lets the form go, without a token, and onError fires', async () => {
    const { page, captures, posts } = await open(
      '/slow',
      FORM,
      `sessionStorage.clear();
       service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' }, timeout: 300,
         onError: (e) => sessionStorage.setItem('error', e.name) });`,
      () => new Promise((resolve) => setTimeout(resolve, 1500)),
    );
    await submit(page);
    expect(captures).toHaveLength(1);
    expect(posts).toHaveLength(1);
    expect(posts[0].getAll('service_capture_token')).toEqual(['']);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('error'))).toBe('ServiceTimeoutError');
  });

  it('attests a control ticked by script before the person acts as shown ticked by default, like the checked attribute', async () => {
    const { page, problems, captures, posts } = await open(
      '/pre-ticked',
      `<form id="signup" action="/submit" method="post">
         <label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Newsletter</label>
         <label><input id="analytics" type="checkbox" name="analytics" value="yes"> Analytics</label>
         <label><input id="offers" type="checkbox" name="offers" value="yes"> Offers</label>
         <label><input id="fraud" type="checkbox" name="fraud" value="yes" checked> Fraud checks</label>
         <label><input id="survey" type="checkbox" name="survey" value="yes"> Surveys</label>
         <button id="submit" type="submit">Sign up</button>
       </form>`,
      // How frameworks set the initial state: the property, not the attribute.
      `document.getElementById('newsletter').checked = true;
       document.getElementById('offers').checked = true;
       service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup',
         map: { newsletter: '#newsletter', analytics: '#analytics', offers: '#offers', fraud: '#fraud', survey: '#survey' } });`,
    );
    await page.check('#analytics'); // ticked by the person
    await page.uncheck('#offers'); // pre-ticked by script, unticked by the person
    await submit(page);
    expect(captures).toHaveLength(1);
    expect(captures[0].body.decisions).toEqual({
      newsletter: { decision: 'granted', default_checked: true, mandatory: false },
      analytics: { decision: 'granted', default_checked: false, mandatory: false },
      offers: { decision: 'declined', default_checked: true, mandatory: false },
      fraud: { decision: 'granted', default_checked: true, mandatory: false },
      survey: { decision: 'declined', default_checked: false, mandatory: false },
    });
    expect(posts).toHaveLength(1);
    expect(problems).toEqual([]);
  });

  it('reads the control the page shows at submit when the page re-rendered the form, never a replaced one', async () => {
    const { page, problems, captures, posts } = await open(
      '/re-rendered',
      `<form id="signup" action="/submit" method="post">
         <div id="consents"><label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Newsletter</label></div>
         <label><input id="partners" type="checkbox" name="partners" value="yes"> Partner offers</label>
         <button id="submit" type="submit">Sign up</button>
       </form>`,
      `service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' } });
       sessionStorage.clear();
       service.forms.attach({ flowId: '${PARTNERS}', form: '#signup', map: { partners: document.getElementById('partners') }, onError: (e) => sessionStorage.setItem('error', e.message) });`,
    );
    await page.check('#newsletter');
    // The page re-renders part of its form (a validation round, htmx, a framework): fresh, unticked boxes.
    await page.evaluate(() => {
      const document = (globalThis as any).document;
      document.getElementById('consents').innerHTML = '<label><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Newsletter</label>';
      const old = document.getElementById('partners');
      const fresh = old.cloneNode();
      fresh.checked = false;
      old.replaceWith(fresh);
    });
    await submit(page);
    // The selector finds the box shown now: left unticked, it is a decline, not the replaced box's grant.
    expect(captures.map((c) => [c.body.flow_id, c.body.decisions])).toEqual([[NEWSLETTER, { newsletter: { decision: 'declined', default_checked: false, mandatory: false } }]]);
    // An element given itself and no longer on the page is not attested: onError, and the form goes without its token.
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('error'))).toContain('map.partners');
    expect(posts).toHaveLength(1);
    expect(posts[0].getAll('service_capture_token').sort()).toEqual(['', captures[0].token]);
    expect(problems).toEqual([]);
  });

  it('attests a label shown with decomposed accents and soft hyphens as the published wording, as the service reads it', async () => {
    // The page's HTML holds "u" + a combining diaeresis, a soft hyphen and a zero-width space (as a
    // CMS writes them); the published label is "Monatlicher Newsletter für Kunden".
    const { page, problems, captures } = await open(
      '/labels',
      `<form id="signup" action="/submit" method="post">
         <label id="newsletter-label"><input id="newsletter" type="checkbox" name="newsletter" value="yes"> Monat&shy;licher News&#x200B;letter fu&#x0308;r Kunden</label>
         <button id="submit" type="submit">Sign up</button>
       </form>`,
      `service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' }, labels: { newsletter: '#newsletter-label' } });`,
    );
    await page.check('#newsletter');
    await submit(page);
    expect(captures).toHaveLength(1);
    expect(captures[0].body.labels).toEqual({ newsletter: labelDigest('Monatlicher Newsletter für Kunden') });
    expect(problems).toEqual([]);
  });

  it('writes the published wording over the whole text of a label that wraps its words in an element, keeping its control', async () => {
    const { page, problems, captures } = await open(
      '/wording',
      `<form id="signup" action="/submit" method="post">
         <label id="newsletter-label"><input id="newsletter" type="checkbox" name="newsletter" value="yes"> <span class="words">Old <a href="/terms">newsletter</a> text</span></label>
         <button id="submit" type="submit">Sign up</button>
       </form>`,
      `const attachment = service.forms.attach({ flowId: '${NEWSLETTER}', form: '#signup', map: { newsletter: '#newsletter' }, wording: { newsletter: '#newsletter-label' } });
       attachment.ready.then(() => record('wording')(null), record('wording-failed'));`,
    );
    await page.waitForFunction(() => (globalThis as any).events.some((e: { type: string }) => e.type.startsWith('wording')));
    const label = await page.evaluate(() => {
      const element = (globalThis as any).document.getElementById('newsletter-label');
      return { text: (element.textContent as string).replace(/\s+/g, ' ').trim(), control: element.querySelector('#newsletter') !== null };
    });
    expect(label).toEqual({ text: 'Monthly newsletter', control: true });
    await page.check('#newsletter');
    await submit(page);
    expect(captures).toHaveLength(1);
    // The digest attested is the published wording's, so the service finds it a match.
    expect(captures[0].body.labels).toEqual({ newsletter: require('node:crypto').createHash('sha256').update('Monthly newsletter').digest('hex') });
    expect(problems).toEqual([]);
  });
});
