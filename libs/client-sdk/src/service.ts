/*
 * The core client script, served at {base_url}/sdk/v1/service.js:
 *
 *   <script type="module">
 *     import { Service } from 'https://…/sdk/v1/service.js';
 *     const service = new Service({ publishableKey: 'pk_test_…' });
 *     service.consent({ flowId, container: '#consent', onComplete: (r) => verifyOnYourServer(r.exchangeToken) });
 *   </script>
 *
 * It also sets `window.Service`. Sessions and captures use the publishable key from an allowed origin;
 * an API key is refused in a browser except for previewTemplate.
 */
import { CompleteInfo, createDecisionFrame, DecisionCallbacks, FrameChannel, originOf, safely } from './service-frame.js';
import { attachForm, FormAttachment, FormsAttachOptions } from './service-forms.js';
import { requestJson, ServiceConfigurationError, ServiceError } from './service-http.js';
import { openTemplatePreview, PreviewOptions, TemplatePreview } from './service-preview.js';
import { uuidV4 } from './service-protocol.js';

export * from './service-http.js';
export type { CancelInfo, CompleteInfo, DeadlineInfo, DecisionCallbacks, ReadyInfo, ResizeInfo, StepInfo } from './service-frame.js';
export type { CaptureResult, FormAttachment, FormsAttachOptions } from './service-forms.js';
export type { PreviewOptions, TemplatePreview } from './service-preview.js';
export { FRAME_SCHEMAS, PROTOCOL_VERSION } from './service-protocol.js';

export const VERSION = '1.0.0';

/** Where this script was served from: {base_url} (the script lives at {base_url}/sdk/v1/). */
const SCRIPT_BASE = new URL('../..', import.meta.url).href.replace(/\/+$/, '');
const IN_BROWSER = typeof window !== 'undefined' && typeof document !== 'undefined';
const FLOW_ID = /^flw_[a-z]{2,8}_[0-9a-z]{16}$/;
const SESSION_TOKEN = /^dts_[A-Za-z0-9_-]{1,128}$/;
const OPTIONS = ['publishableKey', 'apiKey', 'baseUrl', 'flowBaseUrl', 'timeout', 'maxRetries'];
const DEFAULT_TIMEOUT_MS = 10_000;

export interface ServiceOptions {
  /** `pk_test_…` or `pk_live_…`: sessions and captures from the browser. */
  publishableKey?: string;
  /** Only for previewTemplate (internal tooling) and, outside browsers, exchange. Never in end-user browsers. */
  apiKey?: string;
  /** The service's base URL; defaults to where this script was served from. */
  baseUrl?: string;
  /** Where the hosted decision pages live; defaults to baseUrl. Messages are taken from this origin only. */
  flowBaseUrl?: string;
  /** Milliseconds a call may take, retries included (default 10000). */
  timeout?: number;
  /** Retries after a 429 or 5xx answer, within the timeout (default 2). */
  maxRetries?: number;
}

export interface Session {
  /** The session's public id (`dcs_…`): the one its webhooks and events name (they never carry the token). */
  sessionId: string;
  /** The participant's credential: it opens the hosted page; keep it out of logs. */
  sessionToken: string;
  decisionUrl: string;
  embedUrl: string;
  kind: 'consent' | 'approval';
  status: string;
  deliveryMode: string;
  flowId: string | null;
  flowVersion: number | null;
  expiresAt: string;
  deadlineAt: string | null;
  createdAt: string;
}

export interface CreateSessionOptions {
  flowId: string;
  /** Default `embed` (with this page's origin as the embed origin). */
  deliveryMode?: 'embed' | 'popup' | 'redirect' | 'direct';
  /** Default: this page's origin (it must be an allowed origin of the application). */
  embedOrigin?: string;
  redirectUri?: string;
  locale?: string;
}

export interface ConsentOptions extends DecisionCallbacks {
  flowId: string;
  /** The element (or a selector for it) the decision frame is appended to. */
  container: string | Element;
  locale?: string;
  /** The iframe's accessible title (default "Consent decision"). */
  title?: string;
}

export interface PopupOptions extends DecisionCallbacks {
  flowId: string;
  locale?: string;
  width?: number;
  height?: number;
  /** Close the window when the decision completes or is cancelled (default true). */
  closeOnComplete?: boolean;
}

export interface RedirectOptions {
  flowId: string;
  /** Where the person lands afterwards: unchanged on success, with `?error=access_denied` otherwise. */
  redirectUri: string;
  locale?: string;
}

export interface EmbeddedDecision {
  readonly session: Session;
  readonly sessionToken: string;
  readonly frame: HTMLIFrameElement;
  /** Asks the frame to end the session; onCancel fires when it acknowledges. */
  cancel(reason?: string): void;
  /** Removes the frame and stops listening. */
  destroy(): void;
}

export interface PopupDecision {
  readonly session: Session;
  readonly sessionToken: string;
  readonly window: Window;
  cancel(reason?: string): void;
  close(): void;
}

function option(message: string, name: string): ServiceConfigurationError {
  return new ServiceConfigurationError(message, name);
}

function baseUrlOption(value: unknown, name: string): string {
  if (typeof value !== 'string' || !originOf(value)) throw option(`${name} must be an absolute http(s) URL`, name);
  const url = new URL(value);
  if (url.search || url.hash) throw option(`${name} must not have a query or a fragment`, name);
  return url.href.replace(/\/+$/, '');
}

function checkCallbacks(options: object): void {
  for (const [name, value] of Object.entries(options)) {
    if (/^on[A-Z]/.test(name) && value !== undefined && typeof value !== 'function') throw option(`${name} must be a function`, name);
  }
}

function checkFlowId(flowId: unknown): asserts flowId is string {
  if (typeof flowId !== 'string' || !FLOW_ID.test(flowId)) throw option('flowId must be a flow id (flw_…)', 'flowId');
}

function toSession(body: Record<string, any>): Session {
  if (typeof body?.session_token !== 'string' || !SESSION_TOKEN.test(body.session_token)) {
    throw new ServiceError('The service answered without a session token', { code: 'invalid_response' });
  }
  return {
    sessionId: body.session_id,
    sessionToken: body.session_token,
    decisionUrl: body.decision_url,
    embedUrl: body.embed_url,
    kind: body.kind,
    status: body.status,
    deliveryMode: body.delivery_mode,
    flowId: body.flow_id ?? null,
    flowVersion: body.flow_version ?? null,
    expiresAt: body.expires_at,
    deadlineAt: body.deadline_at ?? null,
    createdAt: body.created_at,
  };
}

/** The client constructor. */
export class Service {
  static readonly version = VERSION;
  readonly baseUrl: string;
  readonly flowBaseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly forms: { attach(options: FormsAttachOptions): FormAttachment };
  private readonly publishableKey: string | undefined;
  private readonly apiKey: string | undefined;

  constructor(options: ServiceOptions = {}) {
    if (typeof options !== 'object' || options === null) throw option('The options must be an object', 'options');
    for (const name of Object.keys(options)) if (!OPTIONS.includes(name)) throw option(`Unknown option ${name} (known: ${OPTIONS.join(', ')})`, name);
    const { publishableKey, apiKey } = options;
    if (publishableKey !== undefined && (typeof publishableKey !== 'string' || !/^pk_(test|live)_[A-Za-z0-9_-]+$/.test(publishableKey))) {
      throw option('publishableKey must be a publishable key (pk_test_… or pk_live_…)', 'publishableKey');
    }
    if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length < 16)) throw option('apiKey must be an API token', 'apiKey');
    if (typeof apiKey === 'string' && apiKey.startsWith('pk_')) throw option('apiKey is a publishable key: pass it as publishableKey', 'apiKey');
    this.publishableKey = publishableKey;
    this.apiKey = apiKey;
    this.baseUrl = options.baseUrl === undefined ? SCRIPT_BASE : baseUrlOption(options.baseUrl, 'baseUrl');
    this.flowBaseUrl = options.flowBaseUrl === undefined ? this.baseUrl : baseUrlOption(options.flowBaseUrl, 'flowBaseUrl');
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isInteger(this.timeout) || this.timeout < 1 || this.timeout > 300_000) throw option('timeout must be an integer of milliseconds, 1 to 300000', 'timeout');
    this.maxRetries = options.maxRetries ?? 2;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0 || this.maxRetries > 10) throw option('maxRetries must be an integer, 0 to 10', 'maxRetries');
    this.forms = {
      attach: (attachOptions: FormsAttachOptions) => {
        this.refuseApiKeyInBrowser('forms.attach');
        return attachForm({ baseUrl: this.baseUrl, publishableKey: this.publishableKey, timeoutMs: this.timeout, maxRetries: this.maxRetries }, attachOptions);
      },
    };
  }

  /** The flow host's origin: the only origin whose messages are taken. */
  get flowOrigin(): string {
    return new URL(this.flowBaseUrl).origin;
  }

  /** Opens a decision session for a flow (by default for embedding in this page). */
  async createSession(options: CreateSessionOptions): Promise<Session> {
    this.refuseApiKeyInBrowser('createSession');
    checkFlowId(options?.flowId);
    const mode = options.deliveryMode ?? 'embed';
    if (!['embed', 'popup', 'redirect', 'direct'].includes(mode)) throw option('deliveryMode must be embed, popup, redirect or direct', 'deliveryMode');
    const embedOrigin = options.embedOrigin ?? (IN_BROWSER && mode !== 'direct' ? window.location.origin : undefined);
    if (embedOrigin !== undefined && originOf(embedOrigin) !== embedOrigin) throw option('embedOrigin must be an origin (scheme://host[:port])', 'embedOrigin');
    if (options.redirectUri !== undefined && !originOf(options.redirectUri)) throw option('redirectUri must be an absolute http(s) URL', 'redirectUri');
    if (mode === 'redirect' && options.redirectUri === undefined) throw option('redirectUri is required for deliveryMode redirect', 'redirectUri');
    const body = {
      kind: 'consent',
      flow_id: options.flowId,
      delivery_mode: mode,
      ...(embedOrigin !== undefined ? { embed_origin: embedOrigin } : {}),
      ...(options.redirectUri !== undefined ? { redirect_uri: options.redirectUri } : {}),
      ...(options.locale !== undefined ? { locale: options.locale } : {}),
    };
    return toSession(await this.request('POST', '/api/v1/decisions', body));
  }

  /** Embeds the flow's hosted decision page in `container`. */
  async consent(options: ConsentOptions): Promise<EmbeddedDecision> {
    this.requireBrowser('consent');
    this.refuseApiKeyInBrowser('consent');
    checkFlowId(options?.flowId);
    checkCallbacks(options);
    const container = typeof options.container === 'string' ? document.querySelector(options.container) : options.container;
    if (!(container instanceof Element)) throw option('container must be an element or a selector that matches one', 'container');
    const session = await this.reporting(options, this.createSession({ flowId: options.flowId, deliveryMode: 'embed', locale: options.locale }));
    const frame = createDecisionFrame(`${this.flowBaseUrl}/decisions/${encodeURIComponent(session.sessionToken)}/embed`, options.title ?? 'Consent decision');
    const channel = new FrameChannel({
      origin: this.flowOrigin,
      source: () => frame.contentWindow,
      kind: 'consent',
      sessionToken: session.sessionToken,
      callbacks: {
        ...options,
        onResize: (info) => {
          frame.style.height = `${info.height}px`;
          safely(options.onResize, info);
        },
      },
    });
    container.append(frame);
    return {
      session,
      sessionToken: session.sessionToken,
      frame,
      cancel: (reason?: string) => channel.cancel(reason),
      destroy: () => {
        channel.stop();
        frame.remove();
      },
    };
  }

  /** Opens the flow's hosted decision page in a window (call it from a click handler). */
  async popup(options: PopupOptions): Promise<PopupDecision> {
    this.requireBrowser('popup');
    this.refuseApiKeyInBrowser('popup');
    checkFlowId(options?.flowId);
    checkCallbacks(options);
    // Opened before anything asynchronous, while the click still counts as the person's gesture.
    const width = options.width ?? 480;
    const height = options.height ?? 720;
    const popup = window.open('', `service-decision-${uuidV4()}`, `popup,width=${width},height=${height}`);
    if (!popup) {
      const blocked = new ServiceConfigurationError('The browser blocked the popup: call popup() from a click handler', undefined, 'popup_blocked');
      safely(options.onError, blocked);
      throw blocked;
    }
    let session: Session;
    try {
      session = await this.reporting(options, this.createSession({ flowId: options.flowId, deliveryMode: 'popup', locale: options.locale }));
    } catch (error) {
      popup.close();
      throw error;
    }
    const closeOnComplete = options.closeOnComplete ?? true;
    const finish = () => {
      clearInterval(watcher);
      channel.stop();
      if (closeOnComplete) popup.close();
    };
    const channel = new FrameChannel({
      origin: this.flowOrigin,
      source: () => popup,
      kind: 'consent',
      sessionToken: session.sessionToken,
      callbacks: {
        ...options,
        onComplete: (info: CompleteInfo) => {
          finish();
          safely(options.onComplete, info);
        },
        onCancel: (info) => {
          finish();
          safely(options.onCancel, info);
        },
      },
    });
    const watcher = setInterval(() => {
      if (!popup.closed) return;
      clearInterval(watcher);
      channel.endedByUser('popup_closed');
      channel.stop();
    }, 400);
    popup.location.href = `${this.flowBaseUrl}/decisions/${encodeURIComponent(session.sessionToken)}`;
    return {
      session,
      sessionToken: session.sessionToken,
      window: popup,
      cancel: (reason?: string) => channel.cancel(reason),
      close: () => popup.close(),
    };
  }

  /** Sends this page to the flow's hosted decision page; the person comes back to `redirectUri`. */
  async redirect(options: RedirectOptions): Promise<Session> {
    this.requireBrowser('redirect');
    this.refuseApiKeyInBrowser('redirect');
    checkFlowId(options?.flowId);
    const session = await this.createSession({ flowId: options.flowId, deliveryMode: 'redirect', redirectUri: options.redirectUri, locale: options.locale });
    window.location.assign(`${this.flowBaseUrl}/decisions/${encodeURIComponent(session.sessionToken)}`);
    return session;
  }

  /** Server-side only: exchanges the completion's consent token for the outcome (API key). */
  async exchange(options: { sessionToken: string; consentToken: string }): Promise<Record<string, unknown>> {
    if (IN_BROWSER) throw new ServiceConfigurationError('exchange is server-side only: call it from your server with the API key', 'apiKey', 'server_side_only');
    if (!this.apiKey) throw option('exchange needs the apiKey option', 'apiKey');
    if (typeof options?.sessionToken !== 'string' || !SESSION_TOKEN.test(options.sessionToken)) throw option('sessionToken must be a session token (dts_…)', 'sessionToken');
    if (typeof options.consentToken !== 'string' || options.consentToken.length === 0) throw option('consentToken must be the exchange token of the completion', 'consentToken');
    return this.request('POST', `/api/v1/decisions/${options.sessionToken}/exchange`, { exchange_token: options.consentToken });
  }

  /** Internal tooling: previews a setup template (needs the API key). */
  previewTemplate(options: PreviewOptions): TemplatePreview {
    this.requireBrowser('previewTemplate');
    return openTemplatePreview(
      { baseUrl: this.baseUrl, flowOrigin: this.flowOrigin, apiKey: this.apiKey, timeoutMs: this.timeout, maxRetries: this.maxRetries },
      options,
    );
  }

  private requireBrowser(method: string): void {
    if (!IN_BROWSER) throw new ServiceConfigurationError(`${method} needs a browser page`, undefined, 'browser_only');
  }

  /** An API key grants account-level access: in a browser it is accepted for previewTemplate only. */
  private refuseApiKeyInBrowser(method: string): void {
    if (IN_BROWSER && this.apiKey !== undefined) {
      throw new ServiceConfigurationError(
        `apiKey must never reach an end-user browser; in a browser it is accepted only for previewTemplate. Use publishableKey for ${method}`,
        'apiKey',
        'api_key_in_browser',
      );
    }
  }

  /** An error of the awaited call also goes to onError. */
  private async reporting<T>(callbacks: DecisionCallbacks, promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof ServiceError) safely(callbacks.onError, error);
      throw error;
    }
  }

  private request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, any>> {
    const headers: Record<string, string> = {};
    if (this.publishableKey) headers['X-Publishable-Key'] = this.publishableKey;
    else if (this.apiKey && !IN_BROWSER) headers.Authorization = `Bearer ${this.apiKey}`;
    else throw option('This call needs the publishableKey option', 'publishableKey');
    return requestJson({ method, url: `${this.baseUrl}${path}`, headers, body, timeoutMs: this.timeout, maxRetries: this.maxRetries });
  }
}

if (IN_BROWSER) (window as unknown as { Service: typeof Service }).Service = Service;
