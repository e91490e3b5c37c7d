import { Logger } from '@nestjs/common';
import { encodeReply } from '../wire/envelopes';
import { TransportHeaders } from '../wire/headers';
import { internalError, noResponder, payloadTooLarge, timedOut } from '../wire/rpc-errors';

/** NATS's default `max_payload`: the largest message a NATS server takes unless configured otherwise. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** One message as the bus hands it to a subscriber: strings only, never shared objects. */
export interface BusDelivery {
  subject: string;
  body: string;
  headers: TransportHeaders;
  /** Present for requests; the first reply wins, later ones are ignored (as with NATS). */
  reply?: (body: string) => void;
}

/** A request on its way: its reply, and how to call it off. */
export interface PendingRequest {
  reply: Promise<string>;
  cancel(reason: unknown): void;
}

export type BusListener = (delivery: BusDelivery) => unknown;

interface QueueGroup {
  members: BusListener[];
  next: number;
}

/**
 * The in-process stand-in for a NATS server, with the same routing rules: per subject, every queue
 * group gets one copy of a message, handed to its members in turn. Create one per process and give
 * it to every InProcessServer and InProcessClient. Deliveries always happen on a later turn of the
 * event loop, never inside the sender's call stack, so callers cannot come to rely on re-entrancy
 * that NATS would not give them. Like a NATS server it takes no message over its largest
 * (`maxPayloadBytes`, NATS's default unless given): a request or event over it is refused before it
 * is sent (`payload_too_large`), and a reply over it is replaced by an `internal_error` reply and
 * logged, as NatsCountryServer does, so what outgrows NATS in production fails here too.
 */
export class InProcessBus {
  private readonly logger = new Logger(InProcessBus.name);
  private readonly subjects = new Map<string, Map<string, QueueGroup>>();

  constructor(private readonly options: { maxPayloadBytes?: number } = {}) {}

  /** Whether a body is over the largest message (its UTF-8 bytes, counted only when it could be). */
  private tooLarge(body: string): boolean {
    const max = this.options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    return body.length * 3 > max && Buffer.byteLength(body, 'utf8') > max;
  }

  /** Returns the function that removes this subscription again. */
  subscribe(subject: string, queue: string, listener: BusListener): () => void {
    const groups = this.subjects.get(subject) ?? new Map<string, QueueGroup>();
    this.subjects.set(subject, groups);
    const group = groups.get(queue) ?? { members: [], next: 0 };
    groups.set(queue, group);
    group.members.push(listener);

    return () => {
      const index = group.members.indexOf(listener);
      if (index >= 0) group.members.splice(index, 1);
      if (group.members.length === 0 && groups.get(queue) === group) groups.delete(queue);
      if (groups.size === 0 && this.subjects.get(subject) === groups) this.subjects.delete(subject);
    };
  }

  hasSubscribers(subject: string): boolean {
    return (this.subjects.get(subject)?.size ?? 0) > 0;
  }

  /** Fire and forget: one copy per queue group; with no subscriber the event is dropped. */
  publish(subject: string, body: string, headers: TransportHeaders = {}): void {
    if (this.tooLarge(body)) throw payloadTooLarge(subject);
    this.deliver(subject, body, headers);
  }

  /**
   * Resolves with the first reply body, or rejects with a DomainError: `service_unavailable` when
   * nothing listens on the subject, `upstream_timeout` when no reply came in time. Aborting the
   * signal rejects with its reason.
   */
  request(
    subject: string,
    body: string,
    headers: TransportHeaders,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<string> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const pending = this.call(subject, body, headers, timeoutMs);
    if (!signal) return pending.reply;
    const onAbort = () => pending.cancel(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    return pending.reply.finally(() => signal.removeEventListener('abort', onAbort));
  }

  /**
   * The same request, called off with `cancel(reason)` (which rejects it with that reason and stops
   * its timer) instead of an AbortSignal: the in-process client makes one per RPC, and an
   * AbortController with its event listeners was a few per cent of a verification's CPU time.
   */
  call(subject: string, body: string, headers: TransportHeaders, timeoutMs: number): PendingRequest {
    if (this.tooLarge(body)) return { reply: Promise.reject(payloadTooLarge(subject)), cancel: () => undefined };
    if (!this.hasSubscribers(subject)) return { reply: Promise.reject(noResponder(subject)), cancel: () => undefined };
    let cancel!: (reason: unknown) => void;
    const reply = new Promise<string>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      cancel = (reason) => finish(() => reject(reason));
      const timer = setTimeout(() => finish(() => reject(timedOut(subject, timeoutMs))), timeoutMs);
      this.deliver(subject, body, headers, (replyBody) => {
        if (this.tooLarge(replyBody)) {
          this.logger.error(`Reply on ${subject} could not be sent: MAX_PAYLOAD_EXCEEDED`);
          replyBody = encodeReply({ err: internalError().toJSON() });
        }
        finish(() => resolve(replyBody));
      });
    });
    return { reply, cancel };
  }

  private deliver(subject: string, body: string, headers: TransportHeaders, reply?: (body: string) => void): void {
    for (const group of this.subjects.get(subject)?.values() ?? []) {
      const listener = group.members[group.next % group.members.length];
      group.next = (group.next + 1) % group.members.length;
      // Each subscriber gets its own headers object, so one cannot change what another sees.
      const delivery: BusDelivery = { subject, body, headers: { ...headers }, reply };
      setImmediate(() => this.invoke(listener, delivery));
    }
  }

  private invoke(listener: BusListener, delivery: BusDelivery): void {
    Promise.resolve()
      .then(() => listener(delivery))
      .catch((error: unknown) =>
        this.logger.error(`Subscriber of ${delivery.subject} failed: ${(error as Error)?.message ?? error}`),
      );
  }
}
