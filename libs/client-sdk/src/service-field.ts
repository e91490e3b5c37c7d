/*
 * The `service-consent-field` element, served at {base_url}/sdk/v1/service-field.js:
 *
 *   <script type="module" src="https://…/sdk/v1/service-field.js"></script>
 *   <form action="/signup" method="post">
 *     <input name="email" type="email" required>
 *     <service-consent-field name="consent" flow="flw_…" locale="de" appearance='{"accent": "#0b57d0"}'></service-consent-field>
 *     <button>Sign up</button>
 *   </form>
 *
 * It embeds the consent field the service renders for the flow (every purpose that takes a decision,
 * notice-only purposes as text, the recorded-by mark) and, when the form is submitted, before it
 * leaves the page, asks the frame to capture. The frame posts the capture itself, authenticated by a
 * render proof only it knows; the element writes the capture token into hidden inputs named by `name`
 * and `service_capture_token` (as forms.attach does), exposes it as `value` and lets the form go. If
 * the service cannot be reached the form is still submitted and an `error` event fires. Your server
 * commits the token: POST /api/v1/decisions/<capture_token>/authorize.
 *
 * Attributes: `name`, `flow`, `locale`, `purposes` (a subset, comma- or space-separated; every
 * consent purpose is always shown), `theme` (`light`, `dark`, `auto`), `appearance` (JSON of the
 * bounded vocabulary, applied inside the frame and never sent to the service). One field per flow
 * per form. Events: `ready`, `change` (detail.controls), `captured` (detail: the result), `error`.
 */
import { parseAppearance } from './service-field-appearance.js';
import { acceptFieldMessage, CAPTURE_TOKEN_FIELD, fieldMessage, FieldMessage, tokenExpiring } from './service-field-protocol.js';
import { FRAME_ALLOW, FRAME_SANDBOX, holdSubmitsFor, originOf } from './service-frame.js';
import { errorFromResponse, ServiceConfigurationError, ServiceConnectionError, ServiceError, ServiceTimeoutError } from './service-http.js';
import { uuidV4 } from './service-protocol.js';

/** Where this script was served from: {base_url} (the script lives at {base_url}/sdk/v1/). */
const SCRIPT_BASE = new URL('../..', import.meta.url).href.replace(/\/+$/, '');
const FLOW_ID = /^flw_[a-z]{2,8}_[0-9a-z]{16}$/;
const THEMES = ['light', 'dark', 'auto'];
/** How long a capture may wait for the frame to load, and for the frame's answer. */
const READY_WAIT_MS = 3000;
const CAPTURE_TIMEOUT_MS = 10_000;
/** A frame that has not spoken by then did not load: the page learns why. */
const LOAD_TIMEOUT_MS = 15_000;
/**
 * Why a frame may not have loaded. The element cannot tell the two apart: a page refused for its
 * origin is not frameable (`frame-ancestors 'none'`), which a browser reports to no one.
 */
const FIELD_NOT_LOADED = "the consent field did not load. Is the service reachable, and is this page's origin an allowed origin of the application?";
/** After a failed capture, a submit of the same choices tries again only after this long. */
const RETRY_AFTER_MS = 5000;
const FRAME_TITLES: Record<string, string> = { en: 'Consent choices', de: 'Einwilligungen' };

export interface FieldCaptureOptions {
  /** Browser commit (the application must allow it): recorded at once on the `embedded_field_browser` channel. */
  commit?: boolean;
  /** The person, with `commit` only. */
  subject?: { email: string; external_id?: string };
}

export interface FieldCaptureResult {
  /** The capture token, also written into the form. */
  token: string;
  expiresAt: string;
  recordId?: string;
  channel?: string;
  /** A browser commit for a person homed in another country: captured, not committed; commit it from your server at this country's endpoint. */
  homeCountry?: string;
}

interface Pending {
  requestId: string;
  resolve(result: FieldCaptureResult): void;
  reject(error: ServiceError): void;
  timer: ReturnType<typeof setTimeout>;
}

interface FormFields {
  fields: Map<string, ServiceConsentFieldElement>;
  release: () => void;
}

/** The fields of each form, by flow: one per flow per form; the form's submits held for them (and for the snippet's attachments). */
const forms = new WeakMap<HTMLFormElement, FormFields>();

function register(form: HTMLFormElement, flow: string, field: ServiceConsentFieldElement): boolean {
  let entry = forms.get(form);
  if (!entry) {
    const fields = new Map<string, ServiceConsentFieldElement>();
    entry = {
      fields,
      release: holdSubmitsFor(form, () =>
        Array.from(fields.values())
          .filter((candidate) => candidate.needsCapture())
          .map((candidate) => () => candidate.captureForSubmit()),
      ),
    };
    forms.set(form, entry);
  }
  const holder = entry.fields.get(flow);
  if (holder && holder !== field && holder.isConnected) return false;
  entry.fields.set(flow, field);
  return true;
}

function unregister(form: HTMLFormElement, flow: string, field: ServiceConsentFieldElement): void {
  const entry = forms.get(form);
  if (!entry || entry.fields.get(flow) !== field) return;
  entry.fields.delete(flow);
  if (entry.fields.size === 0) {
    entry.release();
    forms.delete(form);
  }
}

export class ServiceConsentFieldElement extends HTMLElement {
  static get observedAttributes(): string[] {
    return ['name', 'flow', 'locale', 'purposes', 'theme', 'appearance'];
  }

  private frameElement?: HTMLIFrameElement;
  private serviceOrigin?: string;
  private registered?: { form: HTMLFormElement; flow: string };
  private readonly listener = (event: MessageEvent) => this.receive(event);
  private ready = false;
  private readyWaiters: Array<() => void> = [];
  private loadTimer?: ReturnType<typeof setTimeout>;
  private state: Record<string, boolean> = {};
  private token = '';
  private tokenExpiresAt = '';
  private capturedFor?: string;
  private lastAttempt?: { state: string; at: number };
  private pending?: Pending;
  private inFlight?: Promise<FieldCaptureResult>;
  /** Set by `forms.attach({ field, commit })`: the options of the capture made at submit (browser commit). */
  submitCaptureOptions?: () => FieldCaptureOptions;
  private inputs: HTMLInputElement[] = [];

  /** The capture token of the latest capture ('' before one). */
  get value(): string {
    return this.token;
  }

  /** When the capture token expires uncommitted ('' before a capture). */
  get expiresAt(): string {
    return this.tokenExpiresAt;
  }

  /** The state of the field's controls (purpose key → ticked), as the frame reports it. */
  get controls(): Record<string, boolean> {
    return { ...this.state };
  }

  /** The form the field belongs to. */
  get form(): HTMLFormElement | null {
    return this.closest('form');
  }

  /** The embedded frame, once rendered. */
  get frame(): HTMLIFrameElement | undefined {
    return this.frameElement;
  }

  connectedCallback(): void {
    this.render();
  }

  disconnectedCallback(): void {
    this.teardown();
  }

  attributeChangedCallback(name: string, previous: string | null, value: string | null): void {
    if (previous === value || !this.isConnected || !this.registered) return;
    if (name === 'appearance') this.sendInit();
    else if (name === 'name') this.syncInputs();
    else this.render();
  }

  /**
   * Captures now: the frame posts the state of its controls and answers the capture token, which is
   * also written into the form (for forms your own script submits). Rejects with a ServiceError.
   */
  capture(options: FieldCaptureOptions = {}): Promise<FieldCaptureResult> {
    if (this.inFlight) return this.inFlight;
    if (options.commit && (typeof options.subject?.email !== 'string' || options.subject.email.trim() === '')) {
      return Promise.reject(new ServiceConfigurationError('service-consent-field: capture({ commit: true }) needs subject.email', 'subject'));
    }
    const state = this.captureKey(options);
    this.lastAttempt = { state, at: Date.now() };
    const run = (async () => {
      if (!this.frameElement || !this.serviceOrigin) throw new ServiceConfigurationError('service-consent-field: the field is not rendered', undefined, 'field_not_rendered');
      await this.whenReady();
      const target = this.frameElement.contentWindow;
      if (!target) throw new ServiceConnectionError('The consent field is not loaded');
      const requestId = uuidV4();
      const result = new Promise<FieldCaptureResult>((resolve, reject) => {
        const timer = setTimeout(() => reject(new ServiceTimeoutError(CAPTURE_TIMEOUT_MS)), CAPTURE_TIMEOUT_MS);
        this.pending = { requestId, resolve, reject, timer };
      });
      const subject = options.subject ? { email: options.subject.email.trim(), ...(options.subject.external_id ? { external_id: options.subject.external_id } : {}) } : undefined;
      target.postMessage(fieldMessage('service-field:capture', { request_id: requestId, ...(options.commit ? { commit: { subject } } : {}) }), this.serviceOrigin);
      try {
        const captured = await result;
        this.setToken(captured.token, captured.expiresAt);
        this.capturedFor = state;
        this.dispatchEvent(new CustomEvent('captured', { detail: captured }));
        return captured;
      } finally {
        if (this.pending) clearTimeout(this.pending.timer);
        this.pending = undefined;
      }
    })();
    this.inFlight = run;
    const settled = () => {
      if (this.inFlight === run) this.inFlight = undefined;
    };
    run.then(settled, settled);
    return run;
  }

  /**
   * What a capture's token stands for: the choices and, with browser commit, the person it was
   * committed for (a token committed for one e-mail is no capture of another person's submit).
   */
  private captureKey(options: FieldCaptureOptions): string {
    const subject = options.commit ? { email: options.subject?.email?.trim() ?? '', external_id: options.subject?.external_id ?? null } : null;
    return JSON.stringify({ controls: this.state, commit: subject });
  }

  /** Whether a submit must capture first: no token yet, or the choices (or the person committed for) changed since. */
  needsCapture(): boolean {
    if (!this.registered || !this.frameElement) return false;
    const state = this.captureKey(this.submitCaptureOptions?.() ?? {});
    if (this.token && this.capturedFor === state && !tokenExpiring(this.tokenExpiresAt)) return false;
    // A capture that just failed for these choices is not tried again at once (another script resubmitting).
    if (!this.token && this.lastAttempt?.state === state && Date.now() - this.lastAttempt.at < RETRY_AFTER_MS) return false;
    return true;
  }

  /** A capture at submit: any failure becomes an `error` event, and the form goes anyway. */
  captureForSubmit(): Promise<void> {
    return this.capture(this.submitCaptureOptions?.() ?? {}).then(
      () => undefined,
      (error) => {
        this.setToken('', '');
        this.report(error instanceof ServiceError ? error : new ServiceError(String((error as Error)?.message ?? error), { code: 'capture_failed' }), false);
      },
    );
  }

  private render(): void {
    this.teardown();
    const flow = this.getAttribute('flow') ?? '';
    if (!FLOW_ID.test(flow)) return this.refuse(`the flow attribute must be a flow id (flw_…), not ${JSON.stringify(flow.slice(0, 40))}`);
    const form = this.closest('form');
    if (!form) return this.refuse('the element must be placed inside a <form>');
    if (!register(form, flow, this)) {
      return this.refuse(`a form holds one consent field per flow: this second field for ${flow} was not rendered`);
    }
    this.registered = { form, flow };
    const origin = originOf(SCRIPT_BASE);
    if (!origin) return this.refuse('the script must be loaded from the service over http(s)');
    this.serviceOrigin = origin;

    const url = new URL(`${SCRIPT_BASE}/field/v1/${flow}`);
    url.searchParams.set('origin', window.location.origin);
    const locale = this.getAttribute('locale')?.trim();
    if (locale) url.searchParams.set('locale', locale);
    const purposes = (this.getAttribute('purposes') ?? '').split(/[\s,]+/).filter(Boolean);
    if (purposes.length > 0) url.searchParams.set('purposes', purposes.join(','));
    const theme = this.getAttribute('theme')?.trim().toLowerCase();
    if (theme && THEMES.includes(theme)) url.searchParams.set('theme', theme);
    else if (theme) console.warn(`service-consent-field: theme ${JSON.stringify(theme)} is ignored (light, dark or auto)`);

    const frame = document.createElement('iframe');
    frame.setAttribute('sandbox', FRAME_SANDBOX);
    frame.setAttribute('allow', FRAME_ALLOW);
    frame.title = FRAME_TITLES[(locale ?? document.documentElement.lang ?? 'en').slice(0, 2).toLowerCase()] ?? FRAME_TITLES.en;
    frame.src = url.href;
    frame.style.display = 'block';
    frame.style.width = '100%';
    frame.style.border = '0';
    frame.style.height = '0';
    frame.style.minHeight = '3rem';
    window.addEventListener('message', this.listener);
    const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
    if (root.adoptedStyleSheets !== undefined && root.adoptedStyleSheets.length === 0 && typeof CSSStyleSheet === 'function') {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(':host { display: block; }');
      root.adoptedStyleSheets = [sheet];
    }
    root.replaceChildren(frame);
    this.frameElement = frame;
    this.syncInputs();
    this.loadTimer = setTimeout(() => {
      if (!this.ready) {
        this.report(
          new ServiceConnectionError(`service-consent-field: ${FIELD_NOT_LOADED}`, 'field_not_loaded'),
          true,
        );
      }
    }, LOAD_TIMEOUT_MS);
  }

  private teardown(): void {
    window.removeEventListener('message', this.listener);
    if (this.loadTimer) clearTimeout(this.loadTimer);
    if (this.pending) {
      clearTimeout(this.pending.timer);
      this.pending.reject(new ServiceError('The consent field was removed', { code: 'field_removed' }));
      this.pending = undefined;
    }
    if (this.registered) unregister(this.registered.form, this.registered.flow, this);
    this.registered = undefined;
    this.frameElement?.remove();
    this.frameElement = undefined;
    for (const input of this.inputs) input.remove();
    this.inputs = [];
    this.ready = false;
    this.state = {};
    this.token = '';
    this.tokenExpiresAt = '';
    this.capturedFor = undefined;
    this.inFlight = undefined;
  }

  /** Hidden inputs in the form: `name` and `service_capture_token`, both carrying the token. */
  private syncInputs(): void {
    if (!this.registered) return;
    const names = Array.from(new Set([this.getAttribute('name')?.trim() || CAPTURE_TOKEN_FIELD, CAPTURE_TOKEN_FIELD]));
    for (const input of this.inputs) if (!names.includes(input.name)) input.remove();
    this.inputs = names.map((name) => {
      const existing = this.inputs.find((input) => input.name === name && input.isConnected);
      if (existing) return existing;
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      this.append(input);
      return input;
    });
    for (const input of this.inputs) input.value = this.token;
  }

  private setToken(token: string, expiresAt: string): void {
    this.token = token;
    this.tokenExpiresAt = expiresAt;
    for (const input of this.inputs) input.value = token;
  }

  /** When the element cannot render: nothing is embedded, and the page learns why. */
  private refuse(reason: string): void {
    const message = `service-consent-field: ${reason}`;
    console.error(message);
    this.shadowRoot?.replaceChildren();
    this.dispatchEvent(new CustomEvent('error', { detail: { message, code: 'invalid_field' } }));
  }

  private report(error: ServiceError, log: boolean): void {
    if (log) console.error(error.message);
    this.dispatchEvent(new CustomEvent('error', { detail: { message: error.message, code: error.code, error } }));
  }

  private whenReady(): Promise<void> {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((waiter) => waiter !== done);
        reject(new ServiceConnectionError(FIELD_NOT_LOADED, 'field_not_loaded'));
      }, READY_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.readyWaiters.push(done);
    });
  }

  private sendInit(): void {
    const target = this.frameElement?.contentWindow;
    if (!this.ready || !target || !this.serviceOrigin) return;
    const { appearance, ignored } = parseAppearance(this.getAttribute('appearance'));
    if (ignored.length > 0) console.warn(`service-consent-field: appearance ${ignored.join(', ')} ignored (not in the vocabulary)`);
    target.postMessage(fieldMessage('service-field:init', { appearance }), this.serviceOrigin);
  }

  private receive(event: MessageEvent): void {
    if (!this.frameElement || !this.serviceOrigin) return;
    const message = acceptFieldMessage(event, { origin: this.serviceOrigin, source: this.frameElement.contentWindow, direction: 'frame' });
    if (message) this.handle(message);
  }

  private handle(message: FieldMessage): void {
    const p = message.payload;
    switch (message.type) {
      case 'service-field:ready':
        this.ready = true;
        if (this.loadTimer) clearTimeout(this.loadTimer);
        this.state = { ...p.controls };
        this.sendInit();
        for (const waiter of this.readyWaiters.splice(0)) waiter();
        this.dispatchEvent(new CustomEvent('ready', { detail: { controls: this.controls } }));
        return;
      case 'service-field:state':
        this.state = { ...p.controls };
        this.dispatchEvent(new CustomEvent('change', { detail: { controls: this.controls } }));
        return;
      case 'service:resize':
        if (this.frameElement) this.frameElement.style.height = `${p.height}px`;
        return;
      case 'service-field:captured':
        if (this.pending && this.pending.requestId === p.request_id) {
          this.pending.resolve({
            token: p.capture_token,
            expiresAt: p.expires_at,
            ...(p.record_id ? { recordId: p.record_id, channel: p.channel } : {}),
            ...(p.home_country ? { homeCountry: p.home_country } : {}),
          });
        }
        return;
      case 'service-field:failed':
        if (this.pending && this.pending.requestId === p.request_id) this.pending.reject(fieldFailure(p));
        return;
      case 'service:error': {
        const error = new ServiceError(p.message || p.code, { code: p.code });
        if (p.fatal) {
          if (this.loadTimer) clearTimeout(this.loadTimer);
          this.report(new ServiceError(`service-consent-field: ${p.message}`, { code: p.code }), true);
        }
        this.pending?.reject(error);
        return;
      }
    }
  }
}

/**
 * The typed error of a capture the frame reports failed (`service-field:failed`): the class an HTTP
 * answer of that status gets (InvalidRequestError for a 422, with `details` naming the field), else a
 * ServiceConnectionError for no answer, else a ServiceError with the code.
 */
function fieldFailure(p: Record<string, any>): ServiceError {
  if (typeof p.status === 'number') {
    const body = { code: p.code, message: p.message, details: p.details ?? [], ...(p.service_request_id ? { request_id: p.service_request_id } : {}) };
    return errorFromResponse({ statusCode: p.status, body, headers: {} });
  }
  if (p.code === 'connection_error' || p.code === 'timeout') return new ServiceConnectionError(p.message, p.code);
  return new ServiceError(p.message, { code: p.code });
}

if (typeof customElements !== 'undefined' && !customElements.get('service-consent-field')) {
  customElements.define('service-consent-field', ServiceConsentFieldElement);
}
