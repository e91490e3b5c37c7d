import { Logger } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import { connect, ErrorCode, NatsConnection, NatsError } from 'nats';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../in-process/in-process-bus';
import { toNatsHeaders } from '../wire/nats-headers';
import { busUnreachable, clientClosed, noResponder, payloadTooLarge, timedOut } from '../wire/rpc-errors';
import { CountryClient, CountryClientOptions, OutgoingMessage } from './country-client';

export interface NatsCountryClientOptions extends CountryClientOptions {
  /** e.g. `nats://127.0.0.1:4222`; ignored when `connection` is given. */
  servers?: string | string[];
  /** An existing connection to share; close() then leaves it open. */
  connection?: NatsConnection;
  /** Connection name shown by NATS monitoring. */
  name?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const UNREACHABLE: string[] = [
  ErrorCode.ConnectionClosed,
  ErrorCode.ConnectionDraining,
  ErrorCode.ConnectionRefused,
  ErrorCode.ConnectionTimeout,
  ErrorCode.Disconnect,
];

/** Sends requests and events to the services of one country over NATS. */
export class NatsCountryClient extends CountryClient {
  private readonly logger = new Logger(NatsCountryClient.name);
  private readonly options: NatsCountryClientOptions;
  private readonly statusListeners = new Map<string, Array<(data?: unknown) => void>>();
  private connecting?: Promise<NatsConnection>;
  private connection?: NatsConnection;
  /** False while an owned connection is lost and reconnecting: requests then fail at once (busUnreachable). */
  private reachable = true;

  constructor(options: NatsCountryClientOptions) {
    super(options);
    if (!options.connection && !options.servers) throw new TypeError('NatsCountryClient needs servers or connection');
    this.options = options;
  }

  /** Connects once; concurrent and later calls share the connection. Nest's send()/emit() call it. */
  connect(): Promise<NatsConnection> {
    this.connecting ??= this.open().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  /** Drains an owned connection, so events published just before still reach the server. */
  async close(): Promise<void> {
    // A connect still in flight is waited for, so its connection does not outlive the client.
    const connection = await this.connecting?.catch(() => undefined);
    this.connection = undefined;
    this.connecting = undefined;
    if (connection && connection !== this.options.connection && !connection.isClosed() && !connection.isDraining()) {
      await connection.drain();
    }
    this._status$.next('disconnected');
  }

  unwrap<T = NatsConnection>(): T {
    if (!this.connection) throw new Error('NatsCountryClient is not connected yet; call connect() first');
    return this.connection as T;
  }

  /** Forwards NATS status events (`disconnect`, `reconnect`, `update`, ...) of an owned connection. */
  override on(event: string, callback: (data?: unknown) => void): void {
    this.statusListeners.set(event, [...(this.statusListeners.get(event) ?? []), callback]);
  }

  protected async request({ subject, body, headers, timeoutMs }: OutgoingMessage): Promise<string> {
    const connection = await this.connect();
    // With the broker gone, a request would wait its whole timeout and then say it may have taken
    // effect; it never left this process, so the caller hears so at once and retries.
    if (!this.reachable) throw busUnreachable(subject);
    try {
      const reply = await connection.request(subject, encoder.encode(body), {
        timeout: timeoutMs,
        headers: toNatsHeaders(headers),
      });
      return decoder.decode(reply.data);
    } catch (error) {
      // nats.js fails pending requests with a timeout when the connection closes under them.
      if (connection.isClosed() || connection.isDraining()) throw clientClosed(subject);
      throw this.transportFailure(error, subject, timeoutMs);
    }
  }

  protected async publishEvent({ subject, body, headers }: OutgoingMessage): Promise<void> {
    const connection = await this.connect();
    try {
      connection.publish(subject, encoder.encode(body), { headers: toNatsHeaders(headers) });
    } catch (error) {
      throw this.transportFailure(error, subject, 0);
    }
  }

  private async open(): Promise<NatsConnection> {
    const connection =
      this.options.connection ??
      (await connect({
        servers: this.options.servers,
        name: this.options.name ?? `${this.prefix}.client`,
        maxReconnectAttempts: -1,
      }));
    this.connection = connection;
    this._status$.next('connected');
    if (connection !== this.options.connection) void this.watchStatus(connection);
    // The service sends parts of up to NATS's default 1 MiB (docs/architecture.md): a server set
    // lower refuses some of them, which would show only as failed requests.
    const maxPayload = connection.info?.max_payload;
    if (maxPayload !== undefined && maxPayload < DEFAULT_MAX_PAYLOAD_BYTES) {
      this.logger.warn(`the NATS server takes messages of at most ${maxPayload} bytes; this service needs ${DEFAULT_MAX_PAYLOAD_BYTES} (NATS's default max_payload): raise it`);
    }
    return connection;
  }

  private async watchStatus(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect') {
        this.reachable = false;
        this._status$.next('disconnected');
      }
      if (status.type === 'reconnecting') this._status$.next('reconnecting');
      if (status.type === 'reconnect') {
        this.reachable = true;
        this._status$.next('connected');
      }
      for (const listener of this.statusListeners.get(status.type) ?? []) listener(status.data);
    }
  }

  /** NATS failures become the same DomainErrors the in-process bus raises. */
  private transportFailure(error: unknown, subject: string, timeoutMs: number): DomainError {
    const code = error instanceof NatsError ? error.code : undefined;
    if (code === ErrorCode.NoResponders) return noResponder(subject);
    if (code === ErrorCode.Timeout) return timedOut(subject, timeoutMs);
    if (code === ErrorCode.MaxPayloadExceeded) return payloadTooLarge(subject);
    if (code !== undefined && UNREACHABLE.includes(code)) {
      return new DomainError('service_unavailable', `The message bus is not reachable for ${subject}`);
    }
    this.logger.error(`Sending on ${subject} failed: ${(error as Error)?.message ?? error}`, (error as Error)?.stack);
    return new DomainError('service_unavailable', `Sending on ${subject} failed`);
  }
}
