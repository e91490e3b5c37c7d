/*
 * The `service-decision` element, served at {cdn_url}/js/v1/service-decision.js, for approvals and
 * consents alike:
 *
 *   <script type="module" src="https://…/js/v1/service-decision.js"></script>
 *   <service-decision token="dts_…"></service-decision>
 *
 * It embeds the hosted decision page of the token (a session your server opened with this page's
 * origin as `embed_origin`) and re-dispatches each accepted postMessage v2 message as a DOM
 * CustomEvent of the same type (`service:ready`, `service:state`, `service:complete`, …) whose
 * `detail` is the message. Messages are taken only from the flow host's origin and the element's own
 * frame, with `version` 2, the `service:` prefix and a valid envelope.
 */
import { createDecisionFrame, FrameChannel, originOf } from './service-frame.js';

/** Where this script was served from: {cdn_url} (the script lives at {cdn_url}/js/v1/). */
const SCRIPT_BASE = new URL('../..', import.meta.url).href.replace(/\/+$/, '');
const TOKEN = /^dts_[A-Za-z0-9_-]{1,128}$/;

export class ServiceDecisionElement extends HTMLElement {
  static get observedAttributes(): string[] {
    return ['token', 'flow-base-url', 'frame-title'];
  }

  private channel?: FrameChannel;
  private frameElement?: HTMLIFrameElement;

  get token(): string {
    return this.getAttribute('token') ?? '';
  }
  set token(value: string) {
    this.setAttribute('token', value);
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

  attributeChangedCallback(_name: string, previous: string | null, value: string | null): void {
    if (previous !== value && this.isConnected) this.render();
  }

  /** Asks the frame to end the session; it answers with `service:cancel` (cancelled_by `host`). */
  cancel(reason?: string): void {
    this.channel?.cancel(reason);
  }

  private render(): void {
    this.teardown();
    const token = this.token;
    if (!TOKEN.test(token)) return this.fail(`the token attribute must be a decision token (dts_…), not ${JSON.stringify(token.slice(0, 40))}`);
    const base = (this.getAttribute('flow-base-url') ?? SCRIPT_BASE).replace(/\/+$/, '');
    const origin = originOf(base);
    if (!origin) return this.fail('the flow-base-url attribute must be an absolute http(s) URL');
    const frame = createDecisionFrame(`${base}/decisions/${encodeURIComponent(token)}/embed`, this.getAttribute('frame-title') ?? 'Decision');
    this.channel = new FrameChannel({
      origin,
      source: () => frame.contentWindow,
      sessionToken: token,
      callbacks: {
        onResize: ({ height }) => {
          frame.style.height = `${height}px`;
        },
      },
      onMessage: (message) => this.dispatchEvent(new CustomEvent(message.type, { detail: message, bubbles: true, composed: true })),
    });
    const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
    if (root.adoptedStyleSheets !== undefined && root.adoptedStyleSheets.length === 0 && typeof CSSStyleSheet === 'function') {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(':host { display: block; }');
      root.adoptedStyleSheets = [sheet];
    }
    root.replaceChildren(frame);
    this.frameElement = frame;
  }

  private teardown(): void {
    this.channel?.stop();
    this.channel = undefined;
    this.frameElement?.remove();
    this.frameElement = undefined;
  }

  /** A wrong attribute: nothing is embedded; the page learns why (console and an `error` event). */
  private fail(reason: string): void {
    const message = `service-decision: ${reason}`;
    console.error(message);
    this.dispatchEvent(new CustomEvent('error', { detail: { message } }));
  }
}

if (!customElements.get('service-decision')) customElements.define('service-decision', ServiceDecisionElement);
