/*
 * forms.attach: consent captured inside the organisation's own form (the capture snippet). At submit,
 * before the form leaves the page, it reads the mapped consent controls, posts one sanitised capture
 * with the publishable key and writes the capture token into `service_capture_token`. Whatever happens
 * to that call, the form is submitted.
 */
import { holdSubmitsFor, safely } from './service-frame.js';
import { requestJson, ServiceConfigurationError, ServiceError } from './service-http.js';

export const CAPTURE_TOKEN_FIELD = 'service_capture_token';
const FLOW_ID = /^flw_[a-z]{2,8}_[0-9a-z]{16}$/;
const PURPOSE_KEY = /^[a-z][a-z0-9_]{0,63}$/;

/** What a mapped control shows at submit. */
export interface CapturedControl {
  checked: boolean;
  /** Shown ticked by default: the `checked` attribute, or ticked when the attachment first saw it. */
  defaultChecked: boolean;
  required: boolean;
}

export interface CaptureRequestBody {
  flow_id: string;
  channel: 'form_capture';
  decisions: Record<string, { decision: 'granted' | 'declined'; default_checked: boolean; mandatory: boolean }>;
  labels?: Record<string, string>;
  commit?: true;
  subject?: { email: string; external_id?: string };
}

/**
 * The sanitised snapshot: each mapped consent control's state and the label digests, nothing else of
 * the form. (The subject only for a browser commit, which the caller asks for explicitly.)
 */
export function captureRequestBody(
  flowId: string,
  controls: Record<string, CapturedControl>,
  labels?: Record<string, string>,
  subject?: { email: string; external_id?: string },
): CaptureRequestBody {
  const decisions: CaptureRequestBody['decisions'] = {};
  for (const [key, control] of Object.entries(controls)) {
    decisions[key] = { decision: control.checked ? 'granted' : 'declined', default_checked: control.defaultChecked, mandatory: control.required };
  }
  return {
    flow_id: flowId,
    channel: 'form_capture',
    decisions,
    ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
    ...(subject ? { commit: true as const, subject } : {}),
  };
}

/**
 * The characters that show nothing of their own in a label's text (a soft hyphen, zero-width space,
 * word joiner, zero-width no-break space): a CMS inserts them for line breaking, not as wording.
 */
const INVISIBLE = /[\u00AD\u200B\u2060\uFEFF]/g;

/**
 * The text of a label as the capture attests it: in Unicode's composed form (NFC: an "ö" typed as
 * "o" and a combining diaeresis reads as the one character), without the characters that show
 * nothing, whitespace collapsed, trimmed. The service reads the published label the same way
 * (libs/domain labelDigest).
 */
export function labelText(text: string): string {
  return text.normalize('NFC').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

/** SHA-256 of the UTF-8 bytes, lower-case hex (Web Crypto: secure contexts only). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

type Target<T extends Element> = string | T;

export interface FormsAttachOptions {
  flowId: string;
  /** The form, or a selector for it. */
  form: Target<HTMLFormElement>;
  /** Snippet path: purpose key → its checkbox (or a selector, looked up in the form first). */
  map?: Record<string, Target<HTMLInputElement>>;
  /**
   * Field path instead of `map`: the `name` of the form's `service-consent-field` element (load
   * service-field.js). The element captures at submit and holds the token; the callbacks and
   * `commit` apply to it. `labels` and `wording` belong to the snippet path.
   */
  field?: string;
  /** The e-mail input. Its value is sent only with `commit: true`. */
  subjectField?: Target<HTMLInputElement>;
  /** The organisation's own identifier input. Its value is sent only with `commit: true`. */
  externalIdField?: Target<HTMLInputElement>;
  /** Purpose key → label element: the SHA-256 of its text is attested; the record says match or drift. */
  labels?: Record<string, Target<Element>>;
  /** Purpose key → label element: the flow's published wording is written into it (and attested). */
  wording?: Record<string, Target<Element>>;
  /** Browser commit: recorded at once, on the lower-assurance `form_capture_browser` channel (the application must enable it). */
  commit?: boolean;
  /** Milliseconds the capture may take before the form is submitted without it (default: the client's). */
  timeout?: number;
  onCaptured?(result: CaptureResult): void;
  onError?(error: ServiceError): void;
}

export interface CaptureResult {
  /** The capture token, also written into the hidden `service_capture_token` input. */
  token: string;
  expiresAt: string;
  wordingVerdict?: Record<string, 'match' | 'drift'>;
  recordId?: string;
  channel?: string;
}

export interface FormAttachment {
  readonly form: HTMLFormElement;
  /** Settles once the published wording is written (at once without `wording`). */
  readonly ready: Promise<void>;
  /** Captures now (for forms your own script submits); the token is also written into the form. */
  capture(): Promise<CaptureResult>;
  detach(): void;
}

export interface FormsContext {
  baseUrl: string;
  publishableKey: string | undefined;
  timeoutMs: number;
  maxRetries: number;
}

const attached = new WeakMap<HTMLFormElement, Set<string>>();

/** One snippet attachment as the form's submit listener sees it. */
interface SubmitCapture {
  /** Captures for this flow; never rejects (failures go to onError). */
  captureForSubmit(): Promise<void>;
  /** The `service_capture_token` input this attachment writes, once it has one. */
  output?: HTMLInputElement;
}

interface FormSubmits {
  captures: Set<SubmitCapture>;
  release: () => void;
}

/**
 * The snippet attachments of each form: a submit captures every attached flow once (and every
 * consent field of the form, which holds its submits through the same listener), waits for all of
 * them, then submits the form once.
 */
const submits = new WeakMap<HTMLFormElement, FormSubmits>();

function captureAtSubmit(form: HTMLFormElement, capture: SubmitCapture): FormSubmits {
  let entry = submits.get(form);
  if (!entry) {
    const captures = new Set<SubmitCapture>();
    entry = { captures, release: holdSubmitsFor(form, () => Array.from(captures, (each) => () => each.captureForSubmit())) };
    submits.set(form, entry);
  }
  entry.captures.add(capture);
  return entry;
}

function releaseAtSubmit(form: HTMLFormElement, capture: SubmitCapture): void {
  const entry = submits.get(form);
  if (!entry?.captures.delete(capture) || entry.captures.size > 0) return;
  entry.release();
  submits.delete(form);
}

function invalid(option: string, reason: string): ServiceConfigurationError {
  return new ServiceConfigurationError(`forms.attach: ${option} ${reason}`, option);
}

function resolve<T extends Element>(target: unknown, option: string, within: ParentNode | null, accept: (element: Element) => element is T, what: string): T {
  let element: Element | null = null;
  if (typeof target === 'string') {
    try {
      element = within?.querySelector(target) ?? document.querySelector(target);
    } catch {
      throw invalid(option, `is not a valid selector: ${JSON.stringify(target)}`);
    }
    if (!element) throw invalid(option, `matches no element: ${JSON.stringify(target)}`);
  } else if (target instanceof Element) {
    element = target;
  } else {
    throw invalid(option, 'must be a selector or an element');
  }
  if (!accept(element)) throw invalid(option, `must be ${what}`);
  return element;
}

const isForm = (element: Element): element is HTMLFormElement => element instanceof HTMLFormElement;
const isCheckbox = (element: Element): element is HTMLInputElement => element instanceof HTMLInputElement && element.type === 'checkbox';
const isInput = (element: Element): element is HTMLInputElement => element instanceof HTMLInputElement;
const isElement = (element: Element): element is Element => element instanceof Element;

function resolveMap<T extends Element>(
  value: unknown,
  option: string,
  form: HTMLFormElement,
  accept: (element: Element) => element is T,
  what: string,
): Map<string, T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(option, 'must be an object of purpose key → selector');
  const resolved = new Map<string, T>();
  for (const [key, target] of Object.entries(value)) {
    if (!PURPOSE_KEY.test(key)) throw invalid(`${option}.${key}`, 'is not a purpose key');
    resolved.set(key, resolve(target, `${option}.${key}`, form, accept, what));
  }
  return resolved;
}

/** Writes the wording into a label, keeping any control inside it. */
function writeLabel(label: Element, text: string): void {
  if (!label.querySelector(CONTROLS)) {
    label.textContent = text;
    return;
  }
  keepOnlyControls(label);
  label.append(document.createTextNode(` ${text}`));
}

/** The form controls a label may hold (kept when the published wording replaces its text). */
const CONTROLS = 'input, select, textarea, button';

/**
 * Takes out everything of `parent` but its controls and the elements holding them: the label's own
 * wording, also inside a `<span>` or a link, goes (else the published text would be shown beside the
 * old one, and attested as drift), the control stays where it was.
 */
function keepOnlyControls(parent: Element): void {
  for (const node of Array.from(parent.childNodes)) {
    if (node instanceof Element && node.matches(CONTROLS)) continue;
    if (node instanceof Element && node.querySelector(CONTROLS)) keepOnlyControls(node);
    else node.remove();
  }
}

export function attachForm(context: FormsContext, options: FormsAttachOptions): FormAttachment {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  // The field path needs no key: the field's frame authenticates its captures with its render proof.
  if (options.field !== undefined) return attachField(options);
  if (!context.publishableKey) throw new ServiceConfigurationError('forms.attach needs the publishableKey option of the client', 'publishableKey');
  if (typeof options.flowId !== 'string' || !FLOW_ID.test(options.flowId)) throw invalid('flowId', 'must be a flow id (flw_…)');
  const form = resolve(options.form, 'form', null, isForm, 'a <form> element');
  if (options.map === undefined) throw invalid('map', 'is required: map each purpose to its checkbox, or name a service-consent-field with field');
  const controls = resolveMap(options.map, 'map', form, isCheckbox, 'an <input type="checkbox">');
  if (controls.size === 0) throw invalid('map', 'must map at least one purpose to its checkbox');
  const labels = options.labels === undefined ? new Map<string, Element>() : resolveMap(options.labels, 'labels', form, isElement, 'an element');
  const wording = options.wording === undefined ? new Map<string, Element>() : resolveMap(options.wording, 'wording', form, isElement, 'an element');
  const subjectField = options.subjectField === undefined ? undefined : resolve(options.subjectField, 'subjectField', form, isInput, 'an <input>');
  const externalIdField = options.externalIdField === undefined ? undefined : resolve(options.externalIdField, 'externalIdField', form, isInput, 'an <input>');
  if (options.commit !== undefined && typeof options.commit !== 'boolean') throw invalid('commit', 'must be a boolean');
  if (options.commit && !subjectField) throw invalid('subjectField', 'is required with commit: the record binds the person by e-mail');
  for (const name of ['onCaptured', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw invalid(name, 'must be a function');
  }
  const timeoutMs = options.timeout ?? context.timeoutMs;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw invalid('timeout', 'must be a positive integer of milliseconds');
  if ((labels.size > 0 || wording.size > 0) && !globalThis.crypto?.subtle) {
    throw invalid(labels.size > 0 ? 'labels' : 'wording', 'needs Web Crypto, which browsers offer only in secure contexts (https)');
  }
  const flows = attached.get(form) ?? new Set<string>();
  if (flows.has(options.flowId)) throw invalid('form', `is already attached for ${options.flowId}`);
  flows.add(options.flowId);
  attached.set(form, flows);

  const flowId = options.flowId;
  const publishableKey = context.publishableKey;
  const attested = new Map([...labels, ...wording]);
  // Shown ticked by default: the `checked` attribute, or ticked when the attachment first saw the control
  // (every mapped control is found here, at attach): a box ticked by script before the person acts, as
  // frameworks set initial state, was shown pre-ticked too.
  const tickedWhenSeen = new WeakMap(Array.from(controls.values(), (input) => [input, input.checked]));

  /**
   * A mapped element as the page shows it now: the one found at attach while it is on the page; once
   * the page re-rendered it (a validation round, a framework), the selector again, so that the state
   * the person submitted is read, never a replaced element's. An element given itself and gone
   * cannot be found again: the capture fails (onError) rather than attest a control nobody sees.
   */
  function onPage<T extends Element>(found: T, target: unknown, option: string, accept: (element: Element) => element is T, what: string): T {
    if (found.isConnected) return found;
    if (typeof target !== 'string') throw invalid(option, 'is no longer on the page (re-rendered?): map it by selector');
    return resolve(target, option, form, accept, what);
  }

  const self: SubmitCapture = {
    captureForSubmit: () =>
      capture().then(
        (result) => safely(options.onCaptured, result),
        (error) => safely(options.onError, error instanceof ServiceError ? error : new ServiceError(String((error as Error)?.message ?? error), { code: 'capture_failed' })),
      ),
  };

  /** This flow's token input: its own (one per flow attached to the form), created when missing. */
  function tokenInput(): HTMLInputElement {
    if (self.output && form.contains(self.output)) return self.output;
    const taken = new Set(Array.from(submits.get(form)?.captures ?? [], (other) => (other === self ? undefined : other.output)));
    // Not another flow's: a consent field's inputs are its own (it writes its token there).
    const existing = Array.from(form.querySelectorAll('input')).find((input) => input.name === CAPTURE_TOKEN_FIELD && !taken.has(input) && !input.closest('service-consent-field'));
    if (existing) return (self.output = existing);
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = CAPTURE_TOKEN_FIELD;
    form.append(input);
    return (self.output = input);
  }

  function capture(): Promise<CaptureResult> {
    const output = tokenInput();
    output.value = '';
    // Read everything now, before anything asynchronous: this is the state the person submitted.
    const state: Record<string, CapturedControl> = {};
    const texts = new Map<string, string>();
    try {
      for (const [key, found] of controls) {
        const input = onPage(found, options.map?.[key], `map.${key}`, isCheckbox, 'an <input type="checkbox">');
        state[key] = { checked: input.checked, defaultChecked: input.defaultChecked || tickedWhenSeen.get(input) === true, required: input.required };
      }
      for (const [key, found] of attested) {
        const option = wording.has(key) ? 'wording' : 'labels';
        texts.set(key, labelText(onPage(found, options[option]?.[key], `${option}.${key}`, isElement, 'an element').textContent ?? ''));
      }
    } catch (error) {
      return Promise.reject(error);
    }
    const subject = options.commit && subjectField
      ? { email: subjectField.value.trim(), ...(externalIdField && externalIdField.value.trim() ? { external_id: externalIdField.value.trim() } : {}) }
      : undefined;
    return (async () => {
      const digests: Record<string, string> = {};
      for (const [key, text] of texts) digests[key] = await sha256Hex(text);
      const reply = await requestJson<Record<string, any> | undefined>({
        method: 'POST',
        url: `${context.baseUrl}/api/v1/captures`,
        headers: { 'X-Publishable-Key': publishableKey },
        body: captureRequestBody(flowId, state, digests, subject),
        timeoutMs,
        maxRetries: context.maxRetries,
      });
      if (!reply || typeof reply.capture_token !== 'string') throw new ServiceError('The service answered without a capture token', { code: 'invalid_response' });
      output.value = reply.capture_token;
      return {
        token: reply.capture_token,
        expiresAt: reply.expires_at,
        ...(reply.wording_verdict ? { wordingVerdict: reply.wording_verdict } : {}),
        ...(reply.record_id ? { recordId: reply.record_id, channel: reply.channel } : {}),
      };
    })();
  }

  captureAtSubmit(form, self);

  let ready: Promise<void> = Promise.resolve();
  if (wording.size > 0) {
    ready = requestJson<{ purposes?: Record<string, { label?: string }> }>({
      method: 'GET',
      url: `${context.baseUrl}/api/v1/flows/${flowId}/wording`,
      headers: { 'X-Publishable-Key': publishableKey },
      timeoutMs,
      maxRetries: context.maxRetries,
    }).then((published) => {
      for (const [key, label] of wording) {
        const text = published?.purposes?.[key]?.label;
        if (typeof text !== 'string') throw new ServiceConfigurationError(`forms.attach: wording.${key} is not a purpose of ${flowId}`, `wording.${key}`);
        writeLabel(label, text);
      }
    });
    ready.catch((error) => safely(options.onError, error));
  }

  return {
    form,
    ready,
    capture,
    detach() {
      releaseAtSubmit(form, self);
      attached.get(form)?.delete(flowId);
    },
  };
}

/** What forms.attach needs of a `service-consent-field` element (defined by service-field.js, not loaded here). */
interface ConsentFieldElement extends HTMLElement {
  capture(options?: FieldCommit): Promise<CaptureResult>;
  /** Read by the element when it captures at submit. */
  submitCaptureOptions?: () => FieldCommit;
}

interface FieldCommit {
  commit?: boolean;
  subject?: { email: string; external_id?: string };
}

/**
 * The field path: the element renders the purposes in its own frame and captures at submit; the
 * attachment checks it is there for this flow, passes browser commit on, and reports through the
 * callbacks. One per flow per form, as on the snippet path.
 */
function attachField(options: FormsAttachOptions): FormAttachment {
  if (typeof options.flowId !== 'string' || !FLOW_ID.test(options.flowId)) throw invalid('flowId', 'must be a flow id (flw_…)');
  if (typeof options.field !== 'string' || options.field === '') throw invalid('field', 'must be the name of a service-consent-field element');
  for (const name of ['map', 'labels', 'wording'] as const) {
    if (options[name] !== undefined) throw invalid(name, 'belongs to the snippet path; the field path (field) renders the published wording itself');
  }
  const form = resolve(options.form, 'form', null, isForm, 'a <form> element');
  const element = Array.from(form.querySelectorAll('service-consent-field')).find((candidate) => candidate.getAttribute('name') === options.field) as ConsentFieldElement | undefined;
  if (!element) throw invalid('field', `names no <service-consent-field name="${options.field}"> in the form`);
  if (element.getAttribute('flow') !== options.flowId) throw invalid('field', `the element answers ${element.getAttribute('flow')}, not ${options.flowId}`);
  if (typeof element.capture !== 'function') throw invalid('field', 'the service-consent-field element is not defined yet: load service-field.js first');
  const subjectField = options.subjectField === undefined ? undefined : resolve(options.subjectField, 'subjectField', form, isInput, 'an <input>');
  const externalIdField = options.externalIdField === undefined ? undefined : resolve(options.externalIdField, 'externalIdField', form, isInput, 'an <input>');
  if (options.commit !== undefined && typeof options.commit !== 'boolean') throw invalid('commit', 'must be a boolean');
  if (options.commit && !subjectField) throw invalid('subjectField', 'is required with commit: the record binds the person by e-mail');
  for (const name of ['onCaptured', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw invalid(name, 'must be a function');
  }
  const flows = attached.get(form) ?? new Set<string>();
  if (flows.has(options.flowId)) throw invalid('form', `is already attached for ${options.flowId}`);
  flows.add(options.flowId);
  attached.set(form, flows);

  const commit = (): FieldCommit => {
    if (!options.commit || !subjectField) return {};
    const externalId = externalIdField?.value.trim();
    return { commit: true, subject: { email: subjectField.value.trim(), ...(externalId ? { external_id: externalId } : {}) } };
  };
  if (options.commit) element.submitCaptureOptions = commit;
  const onCaptured = (event: Event) => safely(options.onCaptured, (event as CustomEvent<CaptureResult>).detail);
  const onError = (event: Event) => {
    const detail = (event as CustomEvent<{ message: string; code?: string; error?: ServiceError }>).detail;
    safely(options.onError, detail.error ?? new ServiceError(detail.message, { code: detail.code ?? 'field_error' }));
  };
  element.addEventListener('captured', onCaptured);
  element.addEventListener('error', onError);
  return {
    form,
    ready: Promise.resolve(),
    capture: () => element.capture(commit()),
    detach() {
      element.removeEventListener('captured', onCaptured);
      element.removeEventListener('error', onError);
      if (element.submitCaptureOptions === commit) delete element.submitCaptureOptions;
      attached.get(form)?.delete(options.flowId);
    },
  };
}

