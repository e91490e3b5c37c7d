import { InProcessBus } from '../in-process/in-process-bus';
import { clientClosed } from '../wire/rpc-errors';
import { CountryClient, CountryClientOptions, OutgoingMessage } from './country-client';

export interface InProcessClientOptions extends CountryClientOptions {
  /** The process-wide bus the InProcessServers listen on. */
  bus: InProcessBus;
}

/** The embedded default's client: same contract as NatsCountryClient, over the in-process bus. */
export class InProcessClient extends CountryClient {
  private readonly bus: InProcessBus;
  private readonly pending = new Map<AbortController, string>();

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
    for (const [controller, subject] of this.pending) controller.abort(clientClosed(subject));
    this.pending.clear();
    this._status$.next('disconnected');
  }

  unwrap<T = InProcessBus>(): T {
    return this.bus as T;
  }

  /** The bus never disconnects, so there are no status events to forward. */
  override on(): void {}

  protected async request({ subject, body, headers, timeoutMs }: OutgoingMessage): Promise<string> {
    const controller = new AbortController();
    this.pending.set(controller, subject);
    try {
      return await this.bus.request(subject, body, headers, timeoutMs, controller.signal);
    } finally {
      this.pending.delete(controller);
    }
  }

  protected async publishEvent({ subject, body, headers }: OutgoingMessage): Promise<void> {
    this.bus.publish(subject, body, headers);
  }
}
