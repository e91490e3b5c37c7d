import { Logger } from '@nestjs/common';
import { TransportHeaders } from '../wire/headers';
import { noResponder, timedOut } from '../wire/rpc-errors';

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
 * that NATS would not give them.
 */
export class InProcessBus {
  private readonly logger = new Logger(InProcessBus.name);
  private readonly subjects = new Map<string, Map<string, QueueGroup>>();

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
      this.deliver(subject, body, headers, (replyBody) => finish(() => resolve(replyBody)));
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
