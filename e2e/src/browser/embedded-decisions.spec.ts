import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Browser, Frame, Page } from 'playwright-core';
import { validateFrameMessage } from '@dcr/frame-protocol';
import {
  decisionFrame,
  expectNoAxeViolations,
  HostPageServer,
  launchChromium,
  ReceivedMessage,
  receivedMessages,
  startHostPageServer,
  waitForMessage,
  waitForStep,
  WatchedPages,
} from '../../support/browser';
import { applicationWithToken, CountryPair, eventually, http, randomSecret, RunningCountry, startCountryPair } from '../../support/country-harness';
import { NEWSLETTER_FLOW } from '../../support/fixtures';

jest.setTimeout(60000);

/**
 * The hosted decision pages in a real browser (headless Chromium through playwright-core): the
 * embedded frame on a host page of another origin speaking postMessage protocol version 2, walked
 * like a person would, and the pages checked with axe-core against WCAG 2.2 AA. One browser and one
 * country pair (in-process transport, real PostgreSQL) for the whole file.
 */
describe('hosted decision pages in a browser', () => {
  let us: RunningCountry;
  let countries: CountryPair | undefined;
  let browser: Browser;
  let host: HostPageServer;
  let gatewayOrigin: string;
  const adminToken = randomSecret();
  let applicationId: string;
  let apiToken: string;
  const watched = new WatchedPages(() => browser);

  const api = (method: string, path: string, body?: unknown) => http(us.url, method, path, { token: apiToken, body });

  const newsletterFlow = { ...NEWSLETTER_FLOW, title: 'Stay in touch' };

  const approval = { title: 'Pay invoice 117', action: 'payments.create', trigger: 'value', value: { amount: 125000, currency: 'EUR' }, agent_id: 'invoice-bot' };

  async function activeFlow(name: string): Promise<string> {
    const created = await api('POST', `/api/v1/applications/${applicationId}/flows`, { ...newsletterFlow, name });
    expect(created.status).toBe(201);
    expect((await api('POST', `/api/v1/flows/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id;
  }

  async function createSession(body: Record<string, unknown>): Promise<{ session_id: string; session_token: string; decision_url: string; embed_url: string; deadline_at: string | null }> {
    const created = await api('POST', '/api/v1/decisions', body);
    expect(created.status).toBe(201);
    return created.body;
  }

  /** The decisions service's events of a type, as the audit trail keeps them once the outbox relayed them. */
  async function trailEvents(type: string): Promise<Array<{ data: Record<string, any> }>> {
    const client = new Client({ connectionString: us.database.url });
    await client.connect();
    try {
      return (await client.query(`SELECT payload AS data FROM audit_chain.entries WHERE source = 'decisions' AND event_type = $1 ORDER BY leaf_index`, [type])).rows;
    } finally {
      await client.end();
    }
  }

  /** The value of trust_surface_postmessage_dropped_total{reason="origin_missing"} on the gateway. */
  async function droppedOriginMissing(): Promise<number> {
    const text = await (await fetch(`${us.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('trust_surface_postmessage_dropped_total{') && l.includes('reason="origin_missing"'));
    return line ? Number(line.trim().split(/\s+/).pop()) : 0;
  }

  const newPage = (options: { locale?: string } = {}) => watched.open(options);

  /** A host page at http://localhost:<port> that frames the session's embed URL. */
  async function openEmbedded(embedUrl: string, referrerPolicy?: string, locale?: string): Promise<{ page: Page; frame: Frame; problems: string[] }> {
    const { page, problems } = await newPage(locale ? { locale } : {});
    await page.goto(host.pageUrl(embedUrl, referrerPolicy));
    const frame = await decisionFrame(page);
    await frame.waitForSelector('#decision-root[data-ready="true"]');
    return { page, frame, problems };
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

  /** Start and e-mail: from the start step to the field where the mailed code goes. */
  async function askForCode(frame: Frame, email: string, onStep: (step: string) => Promise<void> = async () => {}): Promise<void> {
    await waitForStep(frame, 'start');
    await onStep('start');
    await frame.click('#start-button');
    await waitForStep(frame, 'sign-in');
    await onStep('sign-in');
    await frame.fill('#sign-in-email', email);
    await frame.click('#sign-in-submit');
    await frame.waitForSelector('#sign-in-code', { state: 'visible' });
  }

  /** Start, e-mail, the mailed code, continue: from the start step to the decision step. */
  async function signIn(frame: Frame, email: string, onStep: (step: string) => Promise<void> = async () => {}): Promise<void> {
    await askForCode(frame, email, onStep);
    await onStep('sign-in-code');
    await frame.fill('#sign-in-code', await readCode(email));
    await frame.click('#code-submit');
    // The script moves on from verifying by itself; the continue button is there if it has not yet.
    await frame.waitForSelector('#decision-root[data-step="verifying"], #decision-root[data-step="decision"]');
    if ((await frame.getAttribute('#decision-root', 'data-step')) === 'verifying') {
      await frame.click('#verify-continue', { timeout: 2000 }).catch(() => undefined);
    }
    await waitForStep(frame, 'decision');
    await onStep('decision');
  }

  /** Every message the host received is a valid protocol-v2 message from the gateway's origin. */
  function expectValidMessages(messages: ReceivedMessage[]): void {
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) {
      expect(message.origin).toBe(gatewayOrigin);
      // The message is part of the expectation so that a failure shows what was received.
      expect({ message: message.data, validation: validateFrameMessage(message.data) }).toEqual({ message: message.data, validation: { valid: true } });
      expect(message.data.version).toBe(2);
      expect(message.data.type).toMatch(/^service:/);
    }
    const ids = messages.map((m) => m.data.message_id);
    expect(new Set(ids).size).toBe(ids.length);
  }

  const withoutResize = (messages: ReceivedMessage[]) => messages.filter((m) => m.data.type !== 'service:resize');

  beforeAll(async () => {
    const launching = launchChromium();
    countries = await startCountryPair({ adminToken, env: { NODE_ENV: 'development' } });
    us = countries.us;
    browser = await launching;
    gatewayOrigin = new URL(us.url).origin;
    host = await startHostPageServer(gatewayOrigin);

    ({ applicationId, apiToken } = await applicationWithToken(us, adminToken));
    // A sandbox's http://localhost stands for every port: the host page's origin included.
    const origin = await http(us.url, 'POST', `/api/v1/applications/${applicationId}/allowed_origins`, {
      token: adminToken,
      body: { allowed_origin: { origin: 'http://localhost' } },
    });
    expect(origin.status).toBe(201);
  });

  afterEach(async () => {
    await watched.closeAll();
  });

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await countries?.close();
  });

  describe('embedded on a host page (postMessage protocol version 2)', () => {
    it('walks a consent to a grant with one purpose unticked; the host learns each step and verifies server-side', async () => {
      const flowId = await activeFlow('Embedded consent');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const token = session.session_token;
      expect(session.embed_url).toBe(`${us.url}/decisions/${token}/embed`);
      const { page, frame, problems } = await openEmbedded(session.embed_url);

      const ready = await waitForMessage(page, (m) => m.data?.type === 'service:ready');
      expect(ready.data).toMatchObject({
        type: 'service:ready',
        kind: 'consent',
        version: 2,
        payload: { kind: 'consent', session_token: token, deadline_at: null, branding: {}, mode: 'embed', locale: 'en' },
      });

      await signIn(frame, 'ada.embedded@example.com');

      // Nothing is pre-ticked but the legitimate interest (unticking it objects); notice-only takes no decision.
      const boxes = await frame.$$eval('input[name="purposes"]', (inputs) => inputs.map((i: any) => [i.value, i.checked]));
      expect(boxes).toEqual([
        ['newsletter', false],
        ['analytics', false],
        ['fraud', true],
      ]);
      await frame.check('input[name="purposes"][value="newsletter"]');
      await frame.uncheck('input[name="purposes"][value="fraud"]');
      await frame.click('#grant-button');

      const complete = await waitForMessage(page, (m) => m.data?.type === 'service:complete');
      await waitForStep(frame, 'done');
      expect(await frame.getAttribute('#step-done', 'data-variant')).toBe('granted');

      const messages = await receivedMessages(page);
      expectValidMessages(messages);
      expect(withoutResize(messages).map((m) => [m.data.type, m.data.kind, m.data.type === 'service:state' ? m.data.payload : undefined])).toEqual([
        ['service:ready', 'consent', undefined],
        ['service:state', 'consent', { from: 'pending', to: 'authenticating', step_index: 1, total_steps: 5 }],
        ['service:state', 'consent', { from: 'authenticating', to: 'verifying', step_index: 2, total_steps: 5 }],
        ['service:state', 'consent', { from: 'verifying', to: 'reviewing', step_index: 3, total_steps: 5 }],
        ['service:state', 'consent', { from: 'reviewing', to: 'fulfilled', step_index: 4, total_steps: 5 }],
        ['service:complete', 'consent', undefined],
      ]);
      const resizes = messages.filter((m) => m.data.type === 'service:resize');
      expect(resizes.length).toBeGreaterThanOrEqual(1);
      for (const resize of resizes) expect(Number.isInteger(resize.data.payload.height) && resize.data.payload.height > 0).toBe(true);
      expect(complete.data.payload).toEqual({ outcome: 'granted', exchange_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), completed_at: expect.any(String) });

      // The completion message is a prompt to verify server-side: the token verifies once.
      const verifyPath = `/api/v1/decisions/${token}/verify?consent_token=${encodeURIComponent(complete.data.payload.exchange_token)}`;
      expect((await api('GET', verifyPath)).body).toEqual({ valid: true, status: 'fulfilled', outcome: 'granted' });
      expect((await api('GET', verifyPath)).body).toEqual({ valid: false, status: 'expired' });
      expect((await http(us.url, 'GET', `/api/v1/decisions/${token}`)).body).toMatchObject({ status: 'fulfilled', outcome: 'granted' });

      // The per-purpose choices made in the page reached the server.
      await eventually(async () => (await trailEvents('consent.granted')).some((e) => e.data.flow_id === flowId));
      const granted = (await trailEvents('consent.granted')).find((e) => e.data.flow_id === flowId)!;
      expect(granted.data.purposes).toEqual({ newsletter: 'granted', analytics: 'declined', fraud: 'objected', billing: 'noticed' });
      expect(problems).toEqual([]);
    });

    it('walks an approval to approved; the state messages carry the approval in kind_payload', async () => {
      const session = await createSession({ kind: 'approval', approval, delivery_mode: 'embed', embed_origin: host.origin });
      const token = session.session_token;
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      await waitForMessage(page, (m) => m.data?.type === 'service:ready');
      expect(await frame.textContent('#approval-action')).toContain('payments.create');

      await signIn(frame, 'approver.embedded@example.com');
      expect(await frame.isVisible('#approval-details')).toBe(true);
      await frame.click('#approve-button');
      const complete = await waitForMessage(page, (m) => m.data?.type === 'service:complete');
      await waitForStep(frame, 'done');
      expect(await frame.getAttribute('#step-done', 'data-variant')).toBe('approved');

      const messages = await receivedMessages(page);
      expectValidMessages(messages);
      const kindPayload = (index: number) => ({ step_index: index, total_steps: 5, action: 'payments.create', trigger: 'value' });
      expect(withoutResize(messages).map((m) => [m.data.type, m.data.kind, m.data.type === 'service:state' ? m.data.payload : undefined])).toEqual([
        ['service:ready', 'approval', undefined],
        ['service:state', 'approval', { from: 'pending', to: 'authenticating', kind_payload: kindPayload(1) }],
        ['service:state', 'approval', { from: 'authenticating', to: 'verifying', kind_payload: kindPayload(2) }],
        ['service:state', 'approval', { from: 'verifying', to: 'reviewing', kind_payload: kindPayload(3) }],
        ['service:state', 'approval', { from: 'reviewing', to: 'fulfilled', kind_payload: kindPayload(4) }],
        ['service:complete', 'approval', undefined],
      ]);
      expect(complete.data.payload).toEqual({ outcome: 'approved', exchange_token: expect.any(String), completed_at: expect.any(String) });
      const verified = await api('GET', `/api/v1/decisions/${token}/verify?consent_token=${encodeURIComponent(complete.data.payload.exchange_token)}`);
      expect(verified.body).toEqual({ valid: true, status: 'fulfilled', outcome: 'approved' });
      expect(problems).toEqual([]);
    });

    it('ticks the deadline down to T-5 s (warning) and T-0 (expired)', async () => {
      const flowId = await activeFlow('Deadline');
      const session = await createSession({
        kind: 'consent',
        flow_id: flowId,
        delivery_mode: 'embed',
        embed_origin: host.origin,
        deadline_at: new Date(Date.now() + 6000).toISOString(),
      });
      const deadlineAt = new Date(session.deadline_at!).toISOString();
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      const ready = await waitForMessage(page, (m) => m.data?.type === 'service:ready');
      expect(ready.data.payload.deadline_at).toBe(deadlineAt);

      await waitForMessage(page, (m) => m.data?.type === 'service:deadline' && m.data.payload.remaining_seconds === 0, 15000);
      const messages = await receivedMessages(page);
      expectValidMessages(messages);
      const ticks = messages.filter((m) => m.data.type === 'service:deadline').map((m) => m.data.payload);
      expect(ticks).toContainEqual({ remaining_seconds: 5, level: 'warning', deadline_at: deadlineAt });
      expect(ticks).toContainEqual({ remaining_seconds: 0, level: 'expired', deadline_at: deadlineAt });
      // Each mark fires once, counting down (marks already passed at load fire once, as the latest).
      const marks = ticks.map((t) => t.remaining_seconds);
      expect(marks).toEqual([...marks].sort((a, b) => b - a));
      expect(new Set(marks).size).toBe(marks.length);

      await waitForStep(frame, 'done');
      expect(['deadline', 'expired']).toContain(await frame.getAttribute('#step-done', 'data-variant'));
      await eventually(async () => (await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body.status === 'expired');
      expect(problems).toEqual([]);
    });

    it('without an embed origin talks to the allowed page that frames it', async () => {
      const flowId = await activeFlow('Framed by an allowed page');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed' });
      expect((await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body.embed_origin ?? null).toBeNull();
      const { page, problems } = await openEmbedded(session.embed_url);
      const ready = await waitForMessage(page, (m) => m.data?.type === 'service:ready');
      expect(ready).toMatchObject({ origin: us.url, data: { kind: 'consent', version: 2, payload: { session_token: session.session_token, mode: 'embed' } } });
      expect(problems).toEqual([]);
    });

    it('posts nothing without an embed origin when the page framing it names no referrer, and the gateway counts the dropped messages', async () => {
      const flowId = await activeFlow('No embed origin');
      const before = await droppedOriginMissing();
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed' });
      expect((await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body.embed_origin ?? null).toBeNull();
      // The embed page may still be framed by the application's allowed origins; this one does not say it is the framer.
      const { page, frame, problems } = await openEmbedded(session.embed_url, 'no-referrer');
      await waitForStep(frame, 'start');

      // The frame reports its drops about a second after the first one.
      await eventually(async () => (await droppedOriginMissing()) > before, 8000);
      expect(await receivedMessages(page)).toEqual([]);
      const others = await page.evaluate(() => (globalThis as any).otherMessages as ReceivedMessage[]);
      expect(others.filter((m) => typeof m.data?.type === 'string' && m.data.type.startsWith('service:'))).toEqual([]);
      expect(problems).toEqual([]);
    });

    it('ends the session when the host sends service:cancel', async () => {
      const flowId = await activeFlow('Host cancel');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      await waitForMessage(page, (m) => m.data?.type === 'service:ready');

      const cancel = {
        type: 'service:cancel',
        version: 2,
        kind: 'consent',
        payload: { reason: 'host_closed', cancelled_by: 'host' },
        ts: new Date().toISOString(),
        message_id: randomUUID(),
      };
      expect(validateFrameMessage(cancel)).toEqual({ valid: true });
      await page.evaluate((message) => (globalThis as any).sendToFrame(message), cancel);

      const acknowledged = await waitForMessage(page, (m) => m.data?.type === 'service:cancel');
      expect(acknowledged.data.payload).toEqual({ reason: 'host_closed', cancelled_by: 'host' });
      await waitForStep(frame, 'done');
      expect(await frame.getAttribute('#step-done', 'data-variant')).toBe('host_cancelled');
      expect((await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body.status).toBe('expired');

      const messages = await receivedMessages(page);
      expectValidMessages(messages);
      expect(withoutResize(messages).map((m) => [m.data.type, m.data.type === 'service:state' ? m.data.payload : undefined])).toEqual([
        ['service:ready', undefined],
        ['service:state', { from: 'pending', to: 'expired', step_index: 0, total_steps: 5 }],
        ['service:cancel', undefined],
      ]);
      // The trail names the host as the actor of its cancel, not the person.
      const sessionId = session.session_id;
      const cancelledBy = async () => (await trailEvents('decision.state_changed')).filter((e) => e.data.session_id === sessionId && e.data.to === 'expired').map((e) => e.data.actor.type);
      await eventually(async () => (await cancelledBy()).length > 0);
      expect(await cancelledBy()).toEqual(['host']);
      expect(problems).toEqual([]);
    });

    it("tells the host the language the page is shown in (service:ready's locale), not the flow's", async () => {
      const flowId = await activeFlow('Sprache');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const { page, frame, problems } = await openEmbedded(session.embed_url, undefined, 'de-DE');
      expect(await frame.getAttribute('html', 'lang')).toBe('de');
      const ready = await waitForMessage(page, (m) => m.data?.type === 'service:ready');
      expect(ready.data.payload.locale).toBe('de');
      expect(problems).toEqual([]);
    });

    it('tells a person homed in another country, in words, that this request cannot be answered here; the host learns the home country', async () => {
      const email = 'dora.daheim@example.com';
      expect((await http(countries!.de.url, 'POST', `/api/v1/applications/${applicationId}/subjects`, { token: apiToken, body: { email } })).status).toBe(201);
      const flowId = await activeFlow('Homed elsewhere');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      await askForCode(frame, email);
      await frame.fill('#sign-in-code', await readCode(email));
      await frame.click('#code-submit');
      const error = await waitForMessage(page, (m) => m.data?.type === 'service:error');
      expect(error.data.payload).toEqual({
        code: 'wrong_country',
        message: "The person's home country is DE: open the decision at that country's endpoint",
        fatal: true,
        recoverable_via: null,
      });
      expect(await frame.textContent('#error-message')).toContain('Your data is kept in your home country, Germany, so this request cannot be answered here.');
      expect(await frame.textContent('#error-message')).not.toContain('Open the link you received again');
      expect(await frame.isDisabled('#code-submit')).toBe(true);
      expect(problems.filter((problem) => !/\b421\b/.test(problem))).toEqual([]);
    });

    it('declines when the person confirms with no consent ticked, keeping the objection they made; the terms come before the buttons', async () => {
      const flowId = await activeFlow('Nothing ticked');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      await signIn(frame, 'nina.nothing@example.com');
      // Retention, duration, withdrawal and the policy are read before the choice is made.
      expect(await frame.$$eval('#step-decision #decision-terms-title, #step-decision #grant-button', (els) => els.map((e: any) => e.id))).toEqual(['decision-terms-title', 'grant-button']);
      await frame.uncheck('#purpose-fraud');
      await frame.click('#grant-button');
      await waitForStep(frame, 'done');
      const complete = await waitForMessage(page, (m) => m.data?.type === 'service:complete');
      expect(complete.data.payload.outcome).toBe('declined');
      await eventually(async () => (await trailEvents('consent.denied')).some((e) => e.data.flow_id === flowId));
      const denied = (await trailEvents('consent.denied')).find((e) => e.data.flow_id === flowId)!;
      expect(denied.data.purposes).toEqual({ newsletter: 'declined', analytics: 'declined', fraud: 'objected', billing: 'noticed' });
      expect(problems).toEqual([]);
    });

    it('keeps an objection when the person declines, and shows the policy address where the specification\'s sandbox (no allow-popups) blocks the tab', async () => {
      const flowId = await activeFlow('Decline with objection');
      const session = await createSession({ kind: 'consent', flow_id: flowId, delivery_mode: 'embed', embed_origin: host.origin });
      const { page, frame, problems } = await openEmbedded(session.embed_url);
      await signIn(frame, 'olaf.objects@example.com');
      await frame.click('#decision-policy-link');
      await frame.waitForSelector('.hp-link-blocked');
      expect(await frame.textContent('.hp-link-blocked')).toBe('Your browser did not open a new tab. The page is at: https://example.com/privacy');
      await frame.uncheck('#purpose-fraud');
      await frame.click('#decline-button');
      await waitForStep(frame, 'done');
      await waitForMessage(page, (m) => m.data?.type === 'service:complete');
      await eventually(async () => (await trailEvents('consent.denied')).some((e) => e.data.flow_id === flowId));
      expect((await trailEvents('consent.denied')).find((e) => e.data.flow_id === flowId)!.data.purposes).toMatchObject({ fraud: 'objected' });
      // Chromium logs the blocked tab; nothing else went wrong.
      expect(problems.filter((problem) => !problem.includes('Blocked opening'))).toEqual([]);
    });
  });

  describe('the hosted flow page', () => {
    it('shows the "code sent" notice on the step where the code is entered only, not on the later steps', async () => {
      const flowId = await activeFlow('Code notice');
      const email = 'nora.notice@example.com';
      const { page, problems } = await newPage();
      const entriesBefore = await page.evaluate(() => (globalThis as any).history.length);
      await page.goto(`${us.url}/accord/${flowId}`);
      const frame = page.mainFrame();
      await frame.waitForSelector('#decision-root[data-ready="true"]');
      // The flow page's script opened the session and put the decision page in its place in the history.
      expect(page.url()).toMatch(new RegExp(`^${us.url}/decisions/dts_us[0-9a-z]{30}$`));
      // One entry more than before: Back does not return to the flow page (which would open another session).
      expect(await page.evaluate(() => (globalThis as any).history.length)).toBe(entriesBefore + 1);
      const notice = `We sent a code to ${email}.`;
      /** The text a person sees on the page now (innerText leaves out what is hidden). */
      const visibleText = () => frame.$eval('#decision-root', (root: any) => root.innerText as string);
      const seen: Record<string, boolean> = {};
      await signIn(frame, email, async (step) => {
        if (step === 'sign-in-code') await frame.waitForFunction((text: string) => (globalThis as any).document.getElementById('status-message').textContent.includes(text), notice);
        // The script's own timers (the notice is announced 50 ms after it is cleared) have run.
        await new Promise((resolve) => setTimeout(resolve, 300));
        seen[step] = (await visibleText()).includes(notice);
      });
      expect(seen).toEqual({ start: false, 'sign-in': false, 'sign-in-code': true, decision: false });
      expect(await frame.textContent('#status-message')).toBe('');
      await frame.click('#decline-button');
      await waitForStep(frame, 'done');
      expect((await visibleText()).includes(notice)).toBe(false);
      expect(problems).toEqual([]);
    });
  });

  describe('a request signed in to in another browser', () => {
    it('asks the second browser to sign in again before it decides; then the first one, whose proof is replaced, is asked too', async () => {
      const email = 'two.devices@example.com';
      const session = await createSession({ kind: 'approval', approval, subject: { email } });
      const url = `${us.url}/decisions/${session.session_token}`;
      const first = await newPage();
      await first.page.goto(url);
      const one = first.page.mainFrame();
      await one.waitForSelector('#decision-root[data-ready="true"]');
      await signIn(one, email);

      // Another browser (the organisation holds the link too): the sign-in step, saying why, not the buttons.
      const second = await newPage();
      await second.page.goto(url);
      const two = second.page.mainFrame();
      await two.waitForSelector('#decision-root[data-ready="true"]');
      await waitForStep(two, 'sign-in');
      await two.waitForFunction(() => ((globalThis as any).document.getElementById('status-message').textContent as string).includes('signed in to in another browser'));
      expect(await two.isVisible('#approve-button')).toBe(false);
      await two.fill('#sign-in-email', email);
      await two.click('#sign-in-submit');
      await two.waitForSelector('#sign-in-code', { state: 'visible' });
      await two.fill('#sign-in-code', await readCode(email));
      await two.click('#code-submit');
      await waitForStep(two, 'decision');

      // The first browser's proof no longer counts: approving there asks for a sign-in instead.
      await one.click('#approve-button');
      await waitForStep(one, 'sign-in');
      expect((await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body.status).toBe('reviewing');
      await two.click('#approve-button');
      await waitForStep(two, 'done');
      expect(await two.getAttribute('#step-done', 'data-variant')).toBe('approved');
      expect([...first.problems, ...second.problems].filter((problem) => !/403/.test(String(problem)))).toEqual([]);
    });
  });

  describe('a narrow screen', () => {
    it('wraps a long unbroken title instead of making the page wider than the screen', async () => {
      const session = await createSession({ kind: 'approval', approval: { ...approval, title: `Refund-${'x'.repeat(80)}` } });
      const { page } = await newPage();
      await page.setViewportSize({ width: 360, height: 740 });
      await page.goto(`${us.url}/decisions/${session.session_token}`);
      await page.waitForSelector('#decision-root[data-ready="true"]');
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    });
  });

  describe('accessibility (axe-core, WCAG 2.2 A and AA)', () => {
    it('has no violations on the English decision page at every step, an error included', async () => {
      const flowId = await activeFlow('Accessible');
      const session = await createSession({ kind: 'consent', flow_id: flowId });
      const { page, problems } = await newPage({ locale: 'en-US' });
      await page.goto(session.decision_url);
      const frame = page.mainFrame();
      expect(await page.getAttribute('html', 'lang')).toBe('en');

      await signIn(frame, 'grace.axe@example.com', async (step) => {
        if (step === 'sign-in') {
          // A field error: announced in text, linked with aria-describedby, aria-invalid set.
          await frame.fill('#sign-in-email', 'not an address');
          await frame.click('#sign-in-submit');
          await frame.waitForSelector('#sign-in-email[aria-invalid="true"]');
          await expectNoAxeViolations(frame, 'English page, sign-in step with a field error');
        }
        await expectNoAxeViolations(frame, `English page, ${step} step`);
      });
      await frame.click('#decline-button');
      await waitForStep(frame, 'done');
      await expectNoAxeViolations(frame, 'English page, done step');
      expect(problems).toEqual([]);
    });

    it('has no violations on the German decision page', async () => {
      const flowId = await activeFlow('Barrierefrei');
      const session = await createSession({ kind: 'consent', flow_id: flowId });
      const { page, problems } = await newPage({ locale: 'de-DE' });
      await page.goto(session.decision_url);
      const frame = page.mainFrame();
      expect(await page.getAttribute('html', 'lang')).toBe('de');
      await signIn(frame, 'konrad.axe@example.com', async (step) => {
        if (step === 'start' || step === 'decision') await expectNoAxeViolations(frame, `German page, ${step} step`);
      });
      expect(problems).toEqual([]);
    });

    it('speaks German on a German page: the mailed code and a wrong code, never the service\'s English', async () => {
      const flowId = await activeFlow('Deutsch');
      const session = await createSession({ kind: 'consent', flow_id: flowId });
      const { page, problems } = await newPage({ locale: 'de-DE' });
      await page.goto(session.decision_url);
      const frame = page.mainFrame();
      const email = 'greta.deutsch@example.com';
      await askForCode(frame, email);
      const code = await readCode(email);
      const mail = (await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`)).body.data[0];
      expect(mail.text).toContain(`Ihr Anmeldecode lautet ${code}`);
      // A wrong code: the page's own German message, not the service's reason.
      await frame.fill('#sign-in-code', code === '000000' ? '111111' : '000000');
      await frame.click('#code-submit');
      await frame.waitForFunction(() => ((globalThis as any).document.getElementById('sign-in-code-error').textContent || '').length > 0);
      const wrong = await frame.textContent('#sign-in-code-error');
      expect(wrong).toContain('Der Code ist falsch oder abgelaufen.');
      expect(wrong).not.toContain('does not match');
      expect(problems.filter((problem) => !/\b(400|401|422)\b/.test(problem))).toEqual([]);
    });

    it('has no violations on the approval page, and counters with a note', async () => {
      const session = await createSession({ kind: 'approval', approval });
      const { page, problems } = await newPage();
      await page.goto(session.decision_url);
      const frame = page.mainFrame();
      await signIn(frame, 'approver.axe@example.com', async (step) => {
        if (step === 'start' || step === 'decision') await expectNoAxeViolations(frame, `approval page, ${step} step`);
      });
      await frame.fill('#counter-note', 'Half now, half in March');
      await frame.click('#counter-button');
      await waitForStep(frame, 'done');
      expect(await frame.getAttribute('#step-done', 'data-variant')).toBe('countered');
      await expectNoAxeViolations(frame, 'approval page, done step');
      expect((await http(us.url, 'GET', `/api/v1/decisions/${session.session_token}`)).body).toMatchObject({ status: 'expired', outcome: 'countered' });
      expect(problems).toEqual([]);
    });

    it('has no violations on the records page, where a person signs in and withdraws one purpose by keyboard', async () => {
      const flowId = await activeFlow('Records page');
      const email = 'ruth.records@example.com';
      const recorded = await api('POST', '/api/v1/consent_records', {
        flow_id: flowId,
        subject: { email },
        decisions: { newsletter: { decision: 'granted', default_checked: false, mandatory: false }, analytics: { decision: 'granted', default_checked: false, mandatory: false } },
        captured_at: new Date().toISOString(),
      });
      expect(recorded.status).toBe(201);
      const { page, problems } = await newPage();
      await page.goto(`${us.url}/inbox/records`);
      await page.fill('#inbox-email', email);
      await page.click('#inbox-send-code');
      await page.waitForSelector('#inbox-code');
      const mail = await http(us.url, 'GET', `/_dev/mailbox?to=${encodeURIComponent(email)}`);
      await page.fill('#inbox-code', /\b(\d{6})\b/.exec(mail.body.data[0].text)![1]);
      await page.keyboard.press('Enter');
      // Signing in from the records page comes back to it.
      await page.waitForSelector('#records-list');
      await expectNoAxeViolations(page.mainFrame(), 'records page');
      const withdraw = page.locator(`li[data-record-id="${recorded.body.consent_record.record_id}"] li[data-purpose="newsletter"] button`);
      await withdraw.focus();
      await page.keyboard.press('Enter');
      await page.waitForSelector('#records-confirmation');
      expect(await page.getAttribute(`li[data-record-id="${recorded.body.consent_record.record_id}"] li[data-purpose="newsletter"]`, 'data-status')).toBe('withdrawn');
      await expectNoAxeViolations(page.mainFrame(), 'records page after a withdrawal');
      // A form sent twice (a double click) posts once: the page confirms the withdrawal instead of
      // answering the second post's "nothing was withdrawn".
      // (The second submit goes 30 ms after the first, when the first post is on its way.)
      await page.$eval(`li[data-record-id="${recorded.body.consent_record.record_id}"] li[data-purpose="analytics"] form`, (form: any) => {
        form.requestSubmit();
        setTimeout(() => form.requestSubmit(), 30);
      });
      await page.waitForFunction(() => ((globalThis as any).document.getElementById('records-confirmation')?.textContent ?? '').length > 0 && (globalThis as any).document.readyState === 'complete');
      await page.waitForSelector(`li[data-record-id="${recorded.body.consent_record.record_id}"] li[data-purpose="analytics"][data-status="withdrawn"]`);
      expect(await page.$('#records-error')).toBeNull();
      expect(problems).toEqual([]);
    });

    it('has no violations on the page of an unknown decision (404)', async () => {
      const { page } = await newPage();
      const response = await page.goto(`${us.url}/decisions/dts_us${'0'.repeat(30)}`);
      expect(response?.status()).toBe(404);
      await page.waitForSelector('#error-page[data-status="404"]');
      await expectNoAxeViolations(page.mainFrame(), '404 page');
    });
  });
});
