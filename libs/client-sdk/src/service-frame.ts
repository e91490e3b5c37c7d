/*
 * The hosted decision page in the host page: the iframe (or popup window) and the channel that takes
 * its postMessage v2 messages, after every check, to the integrator's callbacks.
 */
import { ServiceError, ServiceFrameError } from './service-http.js';
import { acceptFrameMessage, DecisionKind, FrameMessage, hostCancelMessage } from './service-protocol.js';

/**
 * The inline iframe requirements: the sandbox keeps forms, scripts and the frame's own origin (plus
 * popups that escape the sandbox, for the policy link that opens in a new tab); passkey sign-in needs
 * `publickey-credentials-get`.
 */
export const FRAME_SANDBOX = 'allow-forms allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox';
export const FRAME_ALLOW = 'publickey-credentials-get';

export interface ReadyInfo {
  sessionToken: string;
  kind: DecisionKind;
  mode: string;
  locale: string;
  deadlineAt: string | null;
  message: FrameMessage;
}
export interface StepInfo {
  kind: DecisionKind;
  from: string;
  to: string;
  /** 0-based position of `to` on the session's path (approvals: from `kind_payload`, when it says). */
  stepIndex: number | undefined;
  totalSteps: number | undefined;
  kindPayload: Record<string, unknown> | undefined;
  message: FrameMessage;
}
export interface CompleteInfo {
  kind: DecisionKind;
  sessionToken: string | undefined;
  outcome: string;
  /** The consent token: verify or exchange it server-side; the message itself proves nothing. */
  exchangeToken: string;
  completedAt: string;
  message: FrameMessage;
}
export interface CancelInfo {
  kind: DecisionKind | undefined;
  sessionToken: string | undefined;
  reason: string;
  cancelledBy: 'user' | 'host';
  /** Undefined when the client noticed the cancellation itself (a popup closed by the person). */
  message: FrameMessage | undefined;
}
export interface ResizeInfo {
  height: number;
  message: FrameMessage;
}
export interface DeadlineInfo {
  remainingSeconds: number;
  level: 'warning' | 'expired';
  deadlineAt: string;
  message: FrameMessage;
}

export interface DecisionCallbacks {
  onReady?(info: ReadyInfo): void;
  onStep?(info: StepInfo): void;
  onComplete?(info: CompleteInfo): void;
  onCancel?(info: CancelInfo): void;
  /** A `service:error` from the frame (a ServiceFrameError), or a failure of the client itself. */
  onError?(error: ServiceError): void;
  onResize?(info: ResizeInfo): void;
  onDeadline?(info: DeadlineInfo): void;
}

/** Runs an integrator's callback; its exception is reported, never thrown into the client. */
export function safely<A>(callback: ((arg: A) => void) | undefined, arg: A): void {
  if (!callback) return;
  try {
    callback(arg);
  } catch (error) {
    if (typeof reportError === 'function') reportError(error);
    else setTimeout(() => {
      throw error;
    });
  }
}

/** The iframe of a hosted decision page, meeting the inline iframe requirements. */
export function createDecisionFrame(src: string, title: string): HTMLIFrameElement {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', FRAME_SANDBOX);
  frame.setAttribute('allow', FRAME_ALLOW);
  frame.title = title;
  frame.src = src;
  frame.style.display = 'block';
  frame.style.width = '100%';
  frame.style.border = '0';
  frame.style.minHeight = '320px';
  return frame;
}

/** `scheme://host[:port]` of an absolute http(s) URL, or undefined. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

export interface FrameChannelOptions {
  /** The flow host's origin: the only origin whose messages are taken. */
  origin: string;
  /** The frame's or popup's window (messages from any other window are ignored). */
  source: () => Window | null;
  kind?: DecisionKind;
  sessionToken?: string;
  callbacks: DecisionCallbacks;
  /** Each accepted message, before the callbacks (the element re-dispatches it as a DOM event). */
  onMessage?(message: FrameMessage): void;
}

/** Listens to `message` events and hands the accepted ones to the callbacks. */
export class FrameChannel {
  private readonly seen = new Set<string>();
  private finished = false;
  private readonly listener = (event: MessageEvent) => this.receive(event);

  constructor(private readonly options: FrameChannelOptions) {
    window.addEventListener('message', this.listener);
  }

  /** True once the decision completed or was cancelled. */
  get done(): boolean {
    return this.finished;
  }

  stop(): void {
    window.removeEventListener('message', this.listener);
  }

  /** Asks the frame to end the session (`service:cancel` from the host); the frame acknowledges. */
  cancel(reason = 'host_cancelled'): void {
    const target = this.options.source();
    if (!target || this.finished) return;
    target.postMessage(hostCancelMessage(this.options.kind ?? 'consent', reason), this.options.origin);
  }

  /** The client itself noticed the end (a closed popup): reported as a cancellation without message. */
  endedByUser(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    safely(this.options.callbacks.onCancel, { kind: this.options.kind, sessionToken: this.options.sessionToken, reason, cancelledBy: 'user', message: undefined });
  }

  private receive(event: MessageEvent): void {
    const source = this.options.source();
    if (!source) return;
    const message = acceptFrameMessage(event, { origin: this.options.origin, source, kind: this.options.kind });
    if (!message || this.seen.has(message.message_id)) return;
    this.seen.add(message.message_id);
    // A channel opened on a token alone (the service-decision element) learns the decision's kind
    // from the frame, so what it sends (a host cancel) names the same kind.
    this.options.kind ??= message.kind;
    if (this.finished && message.type !== 'service:resize') return;
    this.options.onMessage?.(message);
    const { callbacks } = this.options;
    const p = message.payload;
    switch (message.type) {
      case 'service:ready':
        this.options.sessionToken ??= p.session_token;
        return safely(callbacks.onReady, { sessionToken: p.session_token, kind: p.kind, mode: p.mode, locale: p.locale, deadlineAt: p.deadline_at, message });
      case 'service:state': {
        const position = message.kind === 'consent' ? p : (p.kind_payload ?? {});
        return safely(callbacks.onStep, {
          kind: message.kind,
          from: p.from,
          to: p.to,
          stepIndex: Number.isInteger(position.step_index) ? position.step_index : undefined,
          totalSteps: Number.isInteger(position.total_steps) ? position.total_steps : undefined,
          kindPayload: p.kind_payload,
          message,
        });
      }
      case 'service:complete':
        this.finished = true;
        return safely(callbacks.onComplete, {
          kind: message.kind,
          sessionToken: this.options.sessionToken,
          outcome: p.outcome,
          exchangeToken: p.exchange_token,
          completedAt: p.completed_at,
          message,
        });
      case 'service:cancel':
        this.finished = true;
        return safely(callbacks.onCancel, { kind: message.kind, sessionToken: this.options.sessionToken, reason: p.reason, cancelledBy: p.cancelled_by, message });
      case 'service:error':
        return safely(callbacks.onError, new ServiceFrameError(p.message || p.code, p.code, p.fatal, p.recoverable_via));
      case 'service:resize':
        return safely(callbacks.onResize, { height: p.height, message });
      case 'service:deadline':
        return safely(callbacks.onDeadline, { remainingSeconds: p.remaining_seconds, level: p.level, deadlineAt: p.deadline_at, message });
    }
  }
}

/**
 * Submits a form again after its submit listener held it back for a capture, with the button that
 * submitted it (when it is the form's own), flagging `entry.resubmitting` meanwhile so that the
 * listener lets this submit through (the snippet's forms and the consent field's share it).
 */
export function resubmit(form: HTMLFormElement, entry: { resubmitting: boolean }, submitter: HTMLElement | null): void {
  entry.resubmitting = true;
  try {
    const own = submitter && (submitter as HTMLButtonElement).form === form ? submitter : undefined;
    if (typeof form.requestSubmit === 'function') form.requestSubmit(own);
    else HTMLFormElement.prototype.submit.call(form);
  } finally {
    entry.resubmitting = false;
  }
}

/**
 * A form's one submit listener for captures made at submit (the snippet's attachments, the consent
 * fields): a submit with captures due (`due()`, each a function that captures) is held back while
 * they all run, then submitted once, with its button. A submit while they run is held back too; one
 * the page already prevented is the page's own (it captures when it wants).
 */
function capturingSubmitListener(
  form: HTMLFormElement,
  state: { resubmitting: boolean; pending: boolean },
  due: () => Array<() => Promise<unknown>>,
): (event: SubmitEvent) => void {
  return (event: SubmitEvent) => {
    if (state.resubmitting) return;
    if (state.pending) {
      event.preventDefault();
      return;
    }
    // The page submits this form itself (it called preventDefault): it calls capture() when it wants one.
    if (event.defaultPrevented) return;
    const captures = due();
    if (captures.length === 0) return;
    event.preventDefault();
    state.pending = true;
    const submitter = event.submitter;
    void Promise.all(captures.map((capture) => capture())).finally(() => {
      state.pending = false;
      resubmit(form, state, submitter);
    });
  };
}

interface HeldForm {
  sources: Set<() => Array<() => Promise<unknown>>>;
  state: { resubmitting: boolean; pending: boolean };
  listener: (event: SubmitEvent) => void;
}

/**
 * The forms whose submits are held back for captures, each with its one listener. The snippet's
 * attachments (service.js) and the consent fields (service-field.js) share this module, so a form
 * holding both captures every flow at one submit and is submitted once: with a listener each, the
 * other's resubmit would be a new submit to capture again, and its tokens would be made twice.
 */
const heldForms = new WeakMap<HTMLFormElement, HeldForm>();

/**
 * Holds `form`'s submits back while the captures `due()` names run (see capturingSubmitListener).
 * Answers the function that stops it for this `due`.
 */
export function holdSubmitsFor(form: HTMLFormElement, due: () => Array<() => Promise<unknown>>): () => void {
  let held = heldForms.get(form);
  if (!held) {
    const state = { resubmitting: false, pending: false };
    const sources = new Set<() => Array<() => Promise<unknown>>>();
    const listener = capturingSubmitListener(form, state, () => Array.from(sources).flatMap((source) => source()));
    form.addEventListener('submit', listener);
    held = { sources, state, listener };
    heldForms.set(form, held);
  }
  held.sources.add(due);
  return () => {
    const current = heldForms.get(form);
    if (!current?.sources.delete(due) || current.sources.size > 0) return;
    form.removeEventListener('submit', current.listener);
    heldForms.delete(form);
  };
}
