import { InProcessBus } from '../in-process/in-process-bus';
import { CountryServer, CountryServerOptions } from './country-server';

export interface InProcessServerOptions extends CountryServerOptions {
  /** The process-wide bus, shared with every other InProcessServer and InProcessClient. */
  bus: InProcessBus;
}

/** The embedded default: the same routing as NatsCountryServer, over an in-process bus. */
export class InProcessServer extends CountryServer {
  private readonly bus: InProcessBus;
  private unsubscribes: Array<() => void> = [];

  constructor(options: InProcessServerOptions) {
    super(options);
    this.bus = options.bus;
  }

  listen(callback: (error?: unknown) => void): void {
    try {
      for (const route of this.routes()) {
        const unsubscribe = this.bus.subscribe(route.subject, this.queueGroup, async ({ body, headers, reply }) => {
          if (reply) reply(await this.answer(route, body, headers));
          else await this.consume(route, body, headers);
        });
        this.unsubscribes.push(unsubscribe);
      }
      this._status$.next('connected');
      callback();
    } catch (error) {
      this.close();
      callback(error);
    }
  }

  /** Stops taking messages; requests already being handled still get their reply. */
  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this._status$.next('disconnected');
  }

  unwrap<T = InProcessBus>(): T {
    return this.bus as T;
  }

  /** The bus never disconnects, so there are no status events to forward. */
  on(): void {}
}
