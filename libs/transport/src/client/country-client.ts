import { ClientProxy, ReadPacket, WritePacket } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { TransportEvents, TransportStatus } from '../transport-events';
import { TransportRecord } from '../transport-record';
import { decodeReply, encodeRequest } from '../wire/envelopes';
import { normalizeHeaders, TransportHeaders } from '../wire/headers';
import { assertPrefix, subjectFor } from '../wire/subjects';

export interface CountryClientOptions {
  /** First subject token of the country this client talks to, normally `subjectPrefix(country)`. */
  prefix: string;
  /** How long `send()` waits for a reply before failing with `upstream_timeout`. Default 5000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;

/** One message ready for the wire: where it goes, its JSON body and headers. */
export interface OutgoingMessage {
  subject: string;
  body: string;
  headers: TransportHeaders;
  timeoutMs: number;
}

/**
 * What both clients share: subject naming, the JSON envelope, headers and turning a reply into a
 * value or a typed DomainError. Subclasses only move bytes, and must reject a request with a
 * DomainError (`service_unavailable`, `upstream_timeout`) when the transport itself fails.
 */
export abstract class CountryClient extends ClientProxy<TransportEvents, TransportStatus> {
  readonly prefix: string;
  protected readonly timeoutMs: number;

  protected constructor(options: CountryClientOptions) {
    super();
    this.prefix = assertPrefix(options.prefix);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new TypeError('timeoutMs must be a positive number of milliseconds');
  }

  /**
   * Nest's send() without its connect step: `request` connects when it has to (the NATS client
   * waits for its shared connection there; the in-process bus needs none), so the step Nest puts in
   * front of every request (`defer(connect)` and a `mergeMap`) only allocated (about 4 KB a request,
   * docs/performance.md, seventeenth session). Lazy like Nest's: nothing is sent until subscribed,
   * and unsubscribing silences the reply. A missing pattern or payload still gets Nest's error.
   */
  // `any` as in ClientProxy.send, whose signature this keeps.
  override send<TResult = any, TInput = any>(pattern: any, data: TInput): Observable<TResult> {
    if (pattern === null || pattern === undefined || data === null || data === undefined) return super.send(pattern, data);
    return new Observable<TResult>((observer) => this.publish(this.createPacket(pattern, data), this.createObserver(observer)));
  }

  /** Resolves with the reply body; connects first if the transport needs to. */
  protected abstract request(message: OutgoingMessage): Promise<string>;

  /** Hands the event to the transport; resolves once it is on its way (not when it was handled). */
  protected abstract publishEvent(message: OutgoingMessage): Promise<void>;

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    let message: OutgoingMessage;
    try {
      message = this.toOutgoing(packet);
    } catch (error) {
      callback({ err: error });
      return () => undefined;
    }
    let active = true;
    this.request(message)
      .then((body): WritePacket => {
        const reply = decodeReply(body);
        return 'error' in reply ? { err: reply.error } : { response: reply.data, isDisposed: true };
      })
      .catch((error: unknown): WritePacket => ({ err: error }))
      .then((result) => {
        // The caller may have unsubscribed meanwhile; its observer must not hear anything any more.
        if (active) callback(result);
      });
    return () => {
      active = false;
    };
  }

  protected async dispatchEvent<T = void>(packet: ReadPacket): Promise<T> {
    await this.publishEvent(this.toOutgoing(packet));
    return undefined as T;
  }

  /**
   * `data` may be a TransportRecord carrying headers; `packet.metadata` (set by an onDispatchHook,
   * e.g. a request id) travels as headers too, the record's own headers winning.
   */
  private toOutgoing(packet: ReadPacket): OutgoingMessage {
    const record = packet.data instanceof TransportRecord ? (packet.data as TransportRecord) : undefined;
    const subject = subjectFor(this.prefix, this.normalizePattern(packet.pattern));
    return {
      subject,
      body: encodeRequest(record ? record.data : packet.data),
      headers: normalizeHeaders(packet.metadata, record?.options.headers),
      timeoutMs: record?.options.timeoutMs ?? this.timeoutMs,
    };
  }
}
