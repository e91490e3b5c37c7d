import { EventEmitter } from 'node:events';
import { connect, Msg, NatsConnection, Subscription } from 'nats';
import { encodeReply } from '../wire/envelopes';
import { readNatsHeaders } from '../wire/nats-headers';
import { internalError } from '../wire/rpc-errors';
import { CountryServer, CountryServerOptions, Route } from './country-server';

export interface NatsCountryServerOptions extends CountryServerOptions {
  /** e.g. `nats://127.0.0.1:4222`; ignored when `connection` is given. */
  servers?: string | string[];
  /** An existing connection to share; the server then drains only its own subscriptions on close. */
  connection?: NatsConnection;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How long close() waits for the handlers in hand. */
const CLOSE_GRACE_MS = 10_000;

/**
 * Serves the handlers of one service over NATS: `${prefix}.${pattern}` for every handler, in queue
 * group `${prefix}.${service}` so replicas share the load and each service gets one copy of an event.
 */
export class NatsCountryServer extends CountryServer {
  private readonly options: NatsCountryServerOptions;
  private readonly statusEvents = new EventEmitter();
  private connection?: NatsConnection;
  private subscriptions: Subscription[] = [];
  /** Handlers still running: close() waits for them, so their replies go out before the connection ends. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(options: NatsCountryServerOptions) {
    super(options);
    if (!options.connection && !options.servers) throw new TypeError('NatsCountryServer needs servers or connection');
    this.options = options;
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      const routes = this.routes();
      this.connection = this.options.connection ?? (await this.connectOwn());
      for (const route of routes) {
        this.subscriptions.push(
          this.connection.subscribe(route.subject, {
            queue: this.queueGroup,
            callback: (error, msg) => {
              if (error) return this.logger.error(`Subscription to ${route.subject} failed: ${error.message}`);
              const handled = this.onMessage(route, msg).catch((failure: unknown) =>
                this.logger.error(`Message on ${route.subject} failed: ${(failure as Error)?.message ?? failure}`),
              );
              this.inFlight.add(handled);
              void handled.finally(() => this.inFlight.delete(handled));
            },
          }),
        );
      }
      // Only report "listening" once the server has registered every subscription, so a request
      // sent right after listen() resolves finds its responder instead of "no responders".
      await this.connection.flush();
      this._status$.next('connected');
      callback();
    } catch (error) {
      await this.close().catch(() => undefined);
      callback(error);
    }
  }

  /**
   * Drains: stop taking new messages, finish the ones in hand (their handlers run to the end and
   * their replies are sent: a SIGTERM in a rolling update answers what it had taken, instead of
   * leaving callers to time out on work that was done), then close an owned connection. A handler
   * that has not finished after CLOSE_GRACE_MS is given up on.
   */
  async close(): Promise<void> {
    const connection = this.connection;
    const subscriptions = this.subscriptions.splice(0);
    this.connection = undefined;
    if (!connection || connection.isClosed()) return;
    await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
      await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
      clearTimeout(timer);
    }
    if (connection !== this.options.connection && !connection.isClosed() && !connection.isDraining()) await connection.drain();
    this._status$.next('disconnected');
  }

  unwrap<T = NatsConnection>(): T {
    if (!this.connection) throw new Error('NatsCountryServer is not listening yet');
    return this.connection as T;
  }

  /** Forwards NATS status events (`disconnect`, `reconnect`, `update`, `error`, ...) of an owned connection. */
  on(event: string, callback: (data?: unknown) => void): void {
    this.statusEvents.on(event, callback);
  }

  private async connectOwn(): Promise<NatsConnection> {
    // Services reconnect for as long as they run rather than giving up after NATS' default ten tries.
    const connection = await connect({ servers: this.options.servers, name: this.queueGroup, maxReconnectAttempts: -1 });
    void this.watchStatus(connection);
    return connection;
  }

  private async watchStatus(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      // Said in the log, so an operator sees the broker go and come back (the data is the server's address).
      if (status.type === 'disconnect') {
        this._status$.next('disconnected');
        this.logger.warn(`NATS connection lost (${String(status.data)}); reconnecting`);
      }
      if (status.type === 'reconnecting') this._status$.next('reconnecting');
      if (status.type === 'reconnect') {
        this._status$.next('connected');
        this.logger.log(`NATS connection restored (${String(status.data)})`);
      }
      // An 'error' event with no listener would throw out of this loop, so only emit what is heard.
      if (this.statusEvents.listenerCount(status.type) > 0) this.statusEvents.emit(status.type, status.data);
    }
  }

  private async onMessage(route: Route, msg: Msg): Promise<void> {
    const body = decoder.decode(msg.data);
    const headers = readNatsHeaders(msg.headers);
    if (!msg.reply) return this.consume(route, body, headers);
    const reply = await this.answer(route, body, headers);
    try {
      msg.respond(encoder.encode(reply));
    } catch (error) {
      // Typically a reply over NATS' max_payload: tell the caller something went wrong rather than
      // letting it wait for its timeout.
      this.logger.error(`Reply on ${route.subject} could not be sent: ${(error as Error).message}`);
      try {
        msg.respond(encoder.encode(encodeReply({ err: internalError().toJSON() })));
      } catch {
        // The connection itself is gone; the caller's timeout will report it.
      }
    }
  }
}
