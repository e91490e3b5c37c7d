import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';

/*
 * Node 20 gives its own realm `Symbol.dispose` and `Symbol.asyncDispose` (the registry symbols
 * `nodejs.dispose` and `nodejs.asyncDispose`); Jest's test context has neither. playwright-core's
 * bundled `using` helper then looks for other symbols than the ones Node's objects carry, and actions
 * in a cross-process iframe fail with "Object not disposable". Define them, as Node does, before
 * playwright-core loads (V8 has them natively from Node 22 on, and then nothing changes here).
 */
const symbolRegistry = Symbol as unknown as Record<string, symbol | undefined>;
if (!symbolRegistry.dispose) Object.defineProperty(Symbol, 'dispose', { value: Symbol.for('nodejs.dispose') });
if (!symbolRegistry.asyncDispose) Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { chromium } = require('playwright-core') as typeof import('playwright-core');

/**
 * Browser tests: the Debian Chromium (`/usr/bin/chromium`, installed by `.ci/run` when missing)
 * driven by playwright-core, which never downloads a browser of its own. axe-core checks pages
 * against WCAG 2.x A/AA (up to 2.2).
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** A message the host page received from the gateway's origin. */
export interface ReceivedMessage {
  origin: string;
  data: any;
}

export interface HostPageServer {
  /** `http://localhost:<port>`: the origin of the host page (the session's `embed_origin`). */
  origin: string;
  /** The URL of a host page that frames `frameSrc`. */
  /** `referrerPolicy`: the frame's `referrerpolicy` attribute (`no-referrer`: the frame request names no page). */
  pageUrl(frameSrc: string, referrerPolicy?: string): string;
  close(): Promise<void>;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The host page: frames `src` with the sandbox and permissions an integrator would use, records every
 * `message` event from `gatewayOrigin` in `window.received` (others in `window.otherMessages`), and
 * offers `window.sendToFrame(message)`, which posts to the frame with targetOrigin = `gatewayOrigin`.
 */
function hostPage(src: string, gatewayOrigin: string, referrerPolicy?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Host page</title>
<link rel="icon" href="data:,">
<script>
  (function () {
    var gateway = ${JSON.stringify(gatewayOrigin)};
    window.received = [];
    window.otherMessages = [];
    window.addEventListener('message', function (event) {
      var entry = { origin: event.origin, data: event.data };
      if (event.origin === gateway) window.received.push(entry);
      else window.otherMessages.push(entry);
    });
    window.sendToFrame = function (message) {
      document.getElementById('decision-frame').contentWindow.postMessage(message, gateway);
    };
  })();
</script>
</head>
<body>
<main>
<h1>Host page</h1>
<iframe id="decision-frame" title="Decision" width="640" height="900" src="${escapeAttribute(src)}"${referrerPolicy ? ` referrerpolicy="${escapeAttribute(referrerPolicy)}"` : ''}
  sandbox="allow-forms allow-scripts allow-same-origin" allow="publickey-credentials-get"></iframe>
</main>
</body>
</html>`;
}

/** Serves host pages on loopback, at a random free port. */
export async function startHostPageServer(gatewayOrigin: string): Promise<HostPageServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const src = url.searchParams.get('src');
    if (url.pathname !== '/host' || !src) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(hostPage(src, gatewayOrigin, url.searchParams.get('referrer') ?? undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://localhost:${port}`;
  return {
    origin,
    pageUrl: (frameSrc, referrerPolicy) => `${origin}/host?src=${encodeURIComponent(frameSrc)}${referrerPolicy ? `&referrer=${encodeURIComponent(referrerPolicy)}` : ''}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** The messages the host page has received so far. */
export function receivedMessages(page: Page): Promise<ReceivedMessage[]> {
  return page.evaluate(() => (globalThis as any).received as ReceivedMessage[]);
}

/** Waits until the host page has received a message matching `predicate` (checked in Node). */
export async function waitForMessage(
  page: Page,
  predicate: (message: ReceivedMessage) => boolean,
  timeoutMs = 10000,
): Promise<ReceivedMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await receivedMessages(page)).find(predicate);
    if (found) return found;
    if (Date.now() > deadline) {
      const types = (await receivedMessages(page)).map((m) => m.data?.type);
      throw new Error(`the host did not receive the expected message in time; received: ${JSON.stringify(types)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The decision frame of a host page, once it has loaded. */
export async function decisionFrame(page: Page): Promise<Frame> {
  const handle = await page.waitForSelector('#decision-frame');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the host page has no decision frame');
  return frame;
}

/** Waits until the participant script drives the page and shows `step`. */
export async function waitForStep(target: Frame, step: string, timeoutMs = 10000): Promise<void> {
  await target.waitForSelector(`#decision-root[data-ready="true"][data-step="${step}"]`, { timeout: timeoutMs });
}

/* ------------------------------------------------------------------------------------------------
 * Accessibility (axe-core)
 * ---------------------------------------------------------------------------------------------- */

export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: Array<{ target: unknown[]; html: string; failureSummary?: string }>;
}

/**
 * Runs axe-core in a frame (`page.mainFrame()` for a page) (WCAG 2.0/2.1/2.2 A and AA rules) and answers the violations.
 * The script is evaluated through the DevTools protocol, so the pages' strict CSP does not block it.
 */
export async function axeViolations(target: Frame): Promise<AxeViolation[]> {
  const loaded = await target.evaluate(() => typeof (globalThis as any).axe === 'object');
  if (!loaded) await target.evaluate(AXE_SOURCE);
  return target.evaluate(async (tags) => {
    const page = globalThis as any;
    const results = await page.axe.run(page.document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return results.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.map((n: any) => ({ target: n.target, html: n.html, failureSummary: n.failureSummary })),
    }));
  }, WCAG_TAGS);
}

/** A readable report of axe violations, for a failing assertion. */
export function formatViolations(label: string, violations: AxeViolation[]): string {
  if (violations.length === 0) return `${label}: no violations`;
  const lines = [`${label}: ${violations.length} axe-core violation(s)`];
  for (const v of violations) {
    lines.push(`- [${v.impact ?? 'n/a'}] ${v.id}: ${v.help} (${v.helpUrl})`);
    for (const node of v.nodes) {
      lines.push(`    at ${JSON.stringify(node.target)}: ${node.html.length > 200 ? `${node.html.slice(0, 200)}…` : node.html}`);
      if (node.failureSummary) lines.push(...node.failureSummary.split('\n').map((line) => `      ${line}`));
    }
  }
  return lines.join('\n');
}

/** Asserts that axe-core finds no WCAG 2.x A/AA violation, printing them readably when it does. */
export async function expectNoAxeViolations(target: Frame, label: string): Promise<void> {
  const violations = await axeViolations(target);
  if (violations.length > 0) throw new Error(formatViolations(label, violations));
}

export interface Submission {
  path: string;
  fields: Record<string, string>;
}

/**
 * Pages of an integrator on loopback, at `http://localhost:<port>` (an allowed origin of a sandbox
 * application on any port), and the same server as `http://127.0.0.1:<port>`, another origin.
 * Forms post to `/submit`, which records the fields; `/landing` is a redirect target.
 */
export interface PageServer {
  origin: string;
  otherOrigin: string;
  serve(path: string, html: string): string;
  submissions: Submission[];
  close(): Promise<void>;
}

export async function startPageServer(): Promise<PageServer> {
  const pages = new Map<string, string>();
  const submissions: Submission[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);
    if (request.method === 'POST' && url.pathname === '/submit') {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        submissions.push({ path: url.pathname, fields: Object.fromEntries(new URLSearchParams(body)) });
        html('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Thanks</title><link rel="icon" href="data:,"></head><body><h1 id="submitted">Submitted</h1></body></html>');
      });
      return;
    }
    if (url.pathname === '/landing') return html('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Back</title><link rel="icon" href="data:,"></head><body><h1 id="landing">Back</h1></body></html>');
    const page = pages.get(url.pathname);
    if (!page) return response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    html(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://localhost:${port}`;
  return {
    origin,
    otherOrigin: `http://127.0.0.1:${port}`,
    serve(path, html) {
      pages.set(path, html);
      return `${origin}${path}`;
    },
    submissions,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Fresh browser contexts for the tests of one file, each page collecting its script errors and
 * console errors (`problems`, checked by each test); `closeAll()` after each test closes them.
 */
export class WatchedPages {
  private readonly contexts: BrowserContext[] = [];

  constructor(private readonly browser: () => Browser) {}

  async open(options: { locale?: string } = {}): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await this.browser().newContext({ locale: options.locale ?? 'en-US' });
    this.contexts.push(context);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // The browser asks every origin for /favicon.ico; pages that name none get a 404 that is noise.
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) problems.push(`console error: ${message.text()} (${message.location().url})`);
    });
    return { context, page, problems };
  }

  async closeAll(): Promise<void> {
    for (const context of this.contexts.splice(0)) await context.close();
  }
}

/** Problems other than failed loads (and, with `cors`, CORS refusals) that a test causes on purpose. */
export function unexpectedProblems(problems: string[], options: { cors?: boolean } = {}): string[] {
  const expected = options.cors ? /Failed to load resource|net::ERR_|blocked by CORS/ : /Failed to load resource|net::ERR_/;
  return problems.filter((problem) => !expected.test(problem));
}

