/*
 * The script of the consent field's frame ({base_url}/field/v1/<flow_id>), loaded by that page only.
 *
 * It speaks to the `service-consent-field` element in its parent (service-field-protocol.ts), applies
 * the appearance the element sends, and on the element's request posts the capture itself, to its own
 * origin: the decisions read from its own controls (with `default_checked` and `mandatory` as they
 * were rendered), the render proof of its page (which never leaves the frame) and what the browser
 * observed: the host origin, whether each control was changed and only by trusted gestures, and the
 * visibility of the field at submit with how it was measured. The host learns the state of the
 * controls and the capture token.
 */
import { appearanceProperties, parseAppearance } from './service-field-appearance.js';
import { acceptFieldMessage, fieldMessage, FieldFrameMessageType, FieldMessage, tokenExpiring } from './service-field-protocol.js';
import { requestJson, ServiceError } from './service-http.js';

/** What the page hands its script (`#field-config`). */
export interface FieldFrameConfig {
  /** The host origin the page was rendered for; null when it could not be trusted (then nothing is posted). */
  host_origin: string | null;
  flow_id: string;
  flow_version: number;
  locale: string;
  /** Purpose key → the control rendered for it (consent: unticked box; objection: ticked box). */
  controls: Record<string, 'consent' | 'objection'>;
  proof: string | null;
  /** The page is an error page: the script reports this to the host and does nothing else. */
  error?: { code: string; message: string };
}

type Measurement = 'intersection_observer_v2' | 'intersection_observer' | 'unavailable';

const CAPTURE_TIMEOUT_MS = 8000;
/** A proof older than this is renewed before capturing (the service accepts it for an hour). */
const RENEW_AFTER_MS = 50 * 60 * 1000;

/** FNV-1a (32 bits, hex) of a string: tells one capture body of a proof from another in its Idempotency-Key. */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

export function readFieldConfig(doc: Document): FieldFrameConfig | null {
  const element = doc.getElementById('field-config');
  if (!element?.textContent) return null;
  try {
    const config = JSON.parse(element.textContent) as FieldFrameConfig;
    return typeof config === 'object' && config !== null ? config : null;
  } catch {
    return null;
  }
}

/**
 * A browser commit refused for a person homed in another country (421) keeps the capture and answers
 * its token: the capture is made, uncommitted, and the organisation's server commits it at the
 * person's home country. Reported to the host as captured, with `home_country`; anything else, none.
 */
function keptForHomeCountry(error: unknown): Record<string, unknown> | undefined {
  if (!(error instanceof ServiceError) || error.statusCode !== 421 || typeof error.body !== 'object' || error.body === null) return undefined;
  const body = error.body as Record<string, unknown>;
  if (typeof body.capture_token !== 'string' || typeof body.expires_at !== 'string' || typeof body.home_country !== 'string') return undefined;
  return { capture_token: body.capture_token, expires_at: body.expires_at, home_country: body.home_country };
}

class FieldFrame {
  private readonly checkboxes: HTMLInputElement[];
  private readonly changed = new Set<string>();
  private readonly untrusted = new Set<string>();
  private visible: boolean | undefined;
  private measurement: Measurement = 'unavailable';
  private proof: string | null;
  private proofAt = Date.now();
  private proofUsed = false;
  private last?: { fingerprint: string; reply: Record<string, unknown> };
  private busy: Promise<void> = Promise.resolve();
  private lastHeight = -1;
  /** The origin the browser says the host's messages come from. */
  private assertedOrigin: string | null = null;

  constructor(private readonly config: FieldFrameConfig) {
    this.proof = config.proof;
    this.checkboxes = Array.from(document.querySelectorAll<HTMLInputElement>('input[type="checkbox"][data-purpose-key]'));
  }

  start(): void {
    const root = document.getElementById('field-root');
    if (this.config.error) {
      this.post('service:error', { code: this.config.error.code, message: this.config.error.message, fatal: true, recoverable_via: null });
      this.watchHeight();
      return;
    }
    for (const box of this.checkboxes) {
      box.addEventListener('change', (event) => {
        const key = box.dataset.purposeKey!;
        this.changed.add(key);
        if (!event.isTrusted) this.untrusted.add(key);
        this.post('service-field:state', { controls: this.controls() });
      });
    }
    this.watchVisibility(root ?? document.body);
    window.addEventListener('message', (event) => this.receive(event));
    this.watchHeight();
    root?.setAttribute('data-ready', 'true');
    this.post('service-field:ready', { flow_id: this.config.flow_id, flow_version: this.config.flow_version, locale: this.config.locale, controls: this.controls() });
  }

  private controls(): Record<string, boolean> {
    return Object.fromEntries(this.checkboxes.map((box) => [box.dataset.purposeKey!, box.checked]));
  }

  private post(type: FieldFrameMessageType, payload: Record<string, unknown>): void {
    // Never to a wildcard: only to the origin the page was rendered for, and only inside a frame.
    if (!this.config.host_origin || window.parent === window) return;
    window.parent.postMessage(fieldMessage(type, payload), this.config.host_origin);
  }

  private receive(event: MessageEvent): void {
    if (!this.config.host_origin) return;
    const message = acceptFieldMessage(event, { origin: this.config.host_origin, source: window.parent, direction: 'host' });
    if (!message) return;
    this.assertedOrigin = event.origin;
    if (message.type === 'service-field:init') this.applyAppearance(message.payload.appearance);
    else if (message.type === 'service-field:capture') this.busy = this.busy.then(() => this.capture(message));
  }

  /** The appearance, checked again here: only the vocabulary, as CSS custom properties (CSSOM). */
  private applyAppearance(value: unknown): void {
    const { appearance } = parseAppearance(value);
    const root = document.documentElement;
    // A later appearance replaces the earlier one as a whole.
    for (const property of Array.from(root.style)) if (property.startsWith('--cf-')) root.style.removeProperty(property);
    for (const [property, css] of Object.entries(appearanceProperties(appearance))) root.style.setProperty(property, css);
    if (appearance.density) root.setAttribute('data-density', appearance.density);
    else root.removeAttribute('data-density');
    root.setAttribute('data-appearance', 'applied');
  }

  private watchHeight(): void {
    const report = () => {
      const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (height === this.lastHeight) return;
      this.lastHeight = height;
      this.post('service:resize', { height });
    };
    if (typeof ResizeObserver === 'function') new ResizeObserver(report).observe(document.documentElement);
    report();
  }

  /**
   * Visibility in the top-level viewport: IntersectionObserver v2 (occlusion and visual effects
   * count) where the browser has it, else v1 (in the viewport, unclipped).
   */
  private watchVisibility(target: Element): void {
    if (typeof IntersectionObserver !== 'function') return;
    const v2 = typeof IntersectionObserverEntry === 'function' && 'isVisible' in IntersectionObserverEntry.prototype;
    this.measurement = v2 ? 'intersection_observer_v2' : 'intersection_observer';
    const options = v2 ? { threshold: [0, 0.5, 1], trackVisibility: true, delay: 100 } : { threshold: [0, 0.5, 1] };
    new IntersectionObserver((entries) => {
      for (const entry of entries) {
        this.visible = v2 ? (entry as IntersectionObserverEntry & { isVisible: boolean }).isVisible : entry.isIntersecting && entry.intersectionRatio > 0;
      }
    }, options as IntersectionObserverInit).observe(target);
  }

  private async capture(message: FieldMessage): Promise<void> {
    const requestId = message.payload.request_id as string;
    const commit = message.payload.commit as { subject: { email: string; external_id?: string } } | undefined;
    // The state the person submitted, read at once.
    const decisions: Record<string, { decision: 'granted' | 'declined'; default_checked: boolean; mandatory: boolean }> = {};
    const gestures: Record<string, { changed: boolean; trusted_gesture: boolean }> = {};
    for (const box of this.checkboxes) {
      const key = box.dataset.purposeKey!;
      decisions[key] = { decision: box.checked ? 'granted' : 'declined', default_checked: box.defaultChecked, mandatory: box.required };
      const changed = this.changed.has(key);
      gestures[key] = { changed, trusted_gesture: changed && !this.untrusted.has(key) };
    }
    const visible = this.visible;
    const fingerprint = JSON.stringify({ decisions, commit: commit ?? null });
    try {
      // The same choices again (the form was held back after a capture): the same capture, while it can still be committed.
      let reply: Record<string, unknown>;
      if (this.last?.fingerprint === fingerprint && !tokenExpiring(String(this.last.reply.expires_at))) reply = this.last.reply;
      else {
        try {
          reply = await this.sendCapture(decisions, gestures, visible, commit, fingerprint);
        } catch (error) {
          const kept = keptForHomeCountry(error);
          if (kept) reply = kept;
          // A refused proof (used, or too old on a skewed clock): once more with a fresh rendering's proof.
          else if (!(error instanceof ServiceError && error.statusCode === 401)) throw error;
          else reply = await this.sendCapture(decisions, gestures, visible, commit, fingerprint);
        }
      }
      this.post('service-field:captured', {
        request_id: requestId,
        capture_token: reply.capture_token,
        expires_at: reply.expires_at,
        ...(typeof reply.record_id === 'string' ? { record_id: reply.record_id, channel: reply.channel } : {}),
        ...(typeof reply.home_country === 'string' ? { home_country: reply.home_country } : {}),
      });
    } catch (error) {
      const failure = error instanceof ServiceError ? error : new ServiceError(String((error as Error)?.message ?? error), { code: 'capture_failed' });
      // The service's own words: its status, the fields it names and its request id (a 422 on render_proof says "reload the page").
      this.post('service-field:failed', {
        request_id: requestId,
        code: (failure.code || 'capture_failed').slice(0, 100),
        message: failure.message.slice(0, 2000),
        ...(failure.statusCode !== undefined ? { status: failure.statusCode } : {}),
        ...(failure.details.length > 0
          ? { details: failure.details.slice(0, 100).map((detail) => ({ field: detail.field.slice(0, 1000), reason: detail.reason.slice(0, 1000) })) }
          : {}),
        ...(failure.requestId ? { service_request_id: failure.requestId.slice(0, 128) } : {}),
      });
    }
  }

  private async sendCapture(
    decisions: Record<string, unknown>,
    gestures: Record<string, unknown>,
    visible: boolean | undefined,
    commit: { subject: { email: string; external_id?: string } } | undefined,
    fingerprint: string,
  ): Promise<Record<string, unknown>> {
    const proof = await this.usableProof();
    const body = {
      flow_id: this.config.flow_id,
      channel: 'embedded_field',
      decisions,
      render_proof: proof,
      rendering_evidence: {
        host_origin: this.hostOriginAsserted(),
        controls: gestures,
        ...(this.measurement !== 'unavailable' && visible !== undefined ? { visible_at_submit: visible } : {}),
        visibility_measurement: this.measurement !== 'unavailable' && visible === undefined ? 'unavailable' : this.measurement,
      },
      ...(commit ? { commit: true, subject: commit.subject } : {}),
    };
    try {
      const reply = await requestJson<Record<string, unknown>>({
        method: 'POST',
        url: `${location.origin}/api/v1/captures`,
        // A retry of this proof's capture of these choices is answered from the first; the proof captures once.
        headers: { 'Idempotency-Key': `field-${proof.split('.')[2]}-${fnv1a(fingerprint)}` },
        body,
        timeoutMs: CAPTURE_TIMEOUT_MS,
        maxRetries: 1,
      });
      if (!reply || typeof reply.capture_token !== 'string') throw new ServiceError('The service answered without a capture token', { code: 'invalid_response' });
      this.proofUsed = true;
      this.last = { fingerprint, reply };
      return reply;
    } catch (error) {
      // A refused proof (already used, expired) is renewed for the next attempt.
      if (error instanceof ServiceError && (error.statusCode === 401 || error.statusCode === 409)) this.proofUsed = true;
      throw error;
    }
  }

  /** The origin of the page that frames this one, as the browser states it. */
  private hostOriginAsserted(): string | null {
    const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
    if (ancestors && ancestors.length > 0) return ancestors[0];
    return this.assertedOrigin;
  }

  /**
   * The page's proof, or, once it captured or grew old, the proof of a fresh rendering of the same
   * page (the same URL: same flow version, purposes, language and host origin).
   */
  private async usableProof(): Promise<string> {
    if (this.proof && !this.proofUsed && Date.now() - this.proofAt < RENEW_AFTER_MS) return this.proof;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), CAPTURE_TIMEOUT_MS);
    let text: string;
    let status: number;
    try {
      const response = await fetch(location.href, { credentials: 'omit', cache: 'no-store', signal: controller.signal });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new ServiceError(`Could not renew the consent field: ${(error as Error)?.message ?? error}`, { code: 'connection_error' });
    } finally {
      clearTimeout(timer);
    }
    const fresh = status === 200 ? readFieldConfig(new DOMParser().parseFromString(text, 'text/html')) : null;
    if (!fresh?.proof || fresh.flow_version !== this.config.flow_version || JSON.stringify(fresh.controls) !== JSON.stringify(this.config.controls)) {
      throw new ServiceError('The consent field changed since it was shown (a new version of the flow): reload the page', { code: 'field_outdated', statusCode: status });
    }
    this.proof = fresh.proof;
    this.proofAt = Date.now();
    this.proofUsed = false;
    return this.proof;
  }
}

const config = typeof document !== 'undefined' ? readFieldConfig(document) : null;
if (config) new FieldFrame(config).start();
