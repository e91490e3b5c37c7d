import { InProcessBus, PendingRequest } from '../in-process/in-process-bus';
import { clientClosed } from '../wire/rpc-errors';
import { CountryClient, CountryClientOptions, OutgoingMessage } from './country-client';

export interface InProcessClientOptions extends CountryClientOptions {
  /** The process-wide bus the InProcessServers listen on. */
  bus: InProcessBus;
}

/** A request waiting for its reply, in the client's list of them. */
interface Waiting {
  pending: PendingRequest;
  subject: string;
  newer: Waiting | undefined;
  older: Waiting | undefined;
}

/** The embedded default's client: same contract as NatsCountryClient, over the in-process bus. */
export class InProcessClient extends CountryClient {
  private readonly bus: InProcessBus;
  /**
   * Requests waiting for a reply, each with its subject, newest first: closing calls them off. A
   * list linked through the requests themselves, not a Map: a Map's table is made anew as it grows
   * and shrinks with the requests in flight, and a table that had lived long enough to be promoted
   * to the old generation kept, once replaced, the requests it held then alive through every
   * young-generation collection until the next full one, which promoted them with everything they
   * reach (their callers' frames, promises, timers): about a third of what the old generation grew
   * by under create load (docs/performance.md, twenty-sixth session).
   */
  private newest: Waiting | undefined;

  constructor(options: InProcessClientOptions) {
    super(options);
    this.bus = options.bus;
  }

  async connect(): Promise<InProcessBus> {
    this._status$.next('connected');
    return this.bus;
  }

  /** Fails requests still waiting for a reply, as closing a NATS connection does. */
  close(): void {
    for (let waiting = this.newest; waiting; waiting = waiting.older) waiting.pending.cancel(clientClosed(waiting.subject));
    this.newest = undefined;
    this._status$.next('disconnected');
  }

  unwrap<T = InProcessBus>(): T {
    return this.bus as T;
  }

  /** The bus never disconnects, so there are no status events to forward. */
  override on(): void {}

  protected async request({ subject, body, headers, timeoutMs }: OutgoingMessage): Promise<string> {
    const waiting: Waiting = { pending: this.bus.call(subject, body, headers, timeoutMs), subject, newer: undefined, older: this.newest };
    if (this.newest) this.newest.newer = waiting;
    this.newest = waiting;
    try {
      return await waiting.pending.reply;
    } finally {
      this.unlink(waiting);
    }
  }

  /** Takes a request out of the list, and its links out of it (so that it holds no other request). */
  private unlink(waiting: Waiting): void {
    const { newer, older } = waiting;
    if (newer) newer.older = older;
    else if (this.newest === waiting) this.newest = older;
    if (older) older.newer = newer;
    waiting.newer = undefined;
    waiting.older = undefined;
  }

  protected async publishEvent({ subject, body, headers }: OutgoingMessage): Promise<void> {
    this.bus.publish(subject, body, headers);
  }
}
