import { InProcessBus, PendingRequest } from '../in-process/in-process-bus';
import { clientClosed } from '../wire/rpc-errors';
import { CountryClient, CountryClientOptions, OutgoingMessage } from './country-client';

export interface InProcessClientOptions extends CountryClientOptions {
  /** The process-wide bus the InProcessServers listen on. */
  bus: InProcessBus;
}

/** The embedded default's client: same contract as NatsCountryClient, over the in-process bus. */
export class InProcessClient extends CountryClient {
  private readonly bus: InProcessBus;
  /** Requests waiting for a reply, each with its subject: closing calls them off. */
  private readonly pending = new Map<PendingRequest, string>();

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
    for (const [request, subject] of this.pending) request.cancel(clientClosed(subject));
    this.pending.clear();
    this._status$.next('disconnected');
  }

  unwrap<T = InProcessBus>(): T {
    return this.bus as T;
  }

  /** The bus never disconnects, so there are no status events to forward. */
  override on(): void {}

  protected async request({ subject, body, headers, timeoutMs }: OutgoingMessage): Promise<string> {
    const pending = this.bus.call(subject, body, headers, timeoutMs);
    this.pending.set(pending, subject);
    try {
      return await pending.reply;
    } finally {
      this.pending.delete(pending);
    }
  }

  protected async publishEvent({ subject, body, headers }: OutgoingMessage): Promise<void> {
    this.bus.publish(subject, body, headers);
  }
}
