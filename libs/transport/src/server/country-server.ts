import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server, WritePacket } from '@nestjs/microservices';
import { finalize, isObservable } from 'rxjs';
import { TransportContext } from '../transport-context';
import { TransportEvents, TransportStatus } from '../transport-events';
import { decodeRequest, encodeReply, ReplyEnvelope } from '../wire/envelopes';
import { TransportHeaders } from '../wire/headers';
import { noResponder, toSerializedError } from '../wire/rpc-errors';
import { assertPrefix, assertServiceName, queueGroupFor, subjectFor } from '../wire/subjects';

export interface CountryServerOptions {
  /** First subject token, normally `subjectPrefix(country)`; tests use random ones for isolation. */
  prefix: string;
  /** Names the queue group `${prefix}.${service}` shared by every replica of this service. */
  service: string;
}

export interface Route {
  pattern: string;
  subject: string;
}

/**
 * What both transports share: which subjects to hear, and how one incoming message is run through
 * Nest's handler (pipes, guards, filters) and turned into a JSON reply. Subclasses only move bytes.
 */
export abstract class CountryServer
  extends Server<TransportEvents, TransportStatus>
  implements CustomTransportStrategy
{
  protected override readonly logger = new Logger(this.constructor.name);
  readonly prefix: string;
  readonly service: string;

  protected constructor(options: CountryServerOptions) {
    super();
    this.prefix = assertPrefix(options.prefix);
    this.service = assertServiceName(options.service);
  }

  get queueGroup(): string {
    return queueGroupFor(this.prefix, this.service);
  }

  /** One route per registered handler, message and event alike; a bad pattern fails at listen. */
  protected routes(): Route[] {
    return [...this.messageHandlers.keys()].map((pattern) => ({ pattern, subject: subjectFor(this.prefix, pattern) }));
  }

  /**
   * The handler key of a pattern, as Nest's `handleEvent` looks it up. Nest's own first tries
   * `JSON.parse` on it (for object patterns) and catches the SyntaxError every plain subject
   * throws: 1.8 % of the service's busy time under Record API load, for one event per batch
   * (docs/performance.md, twenty-fifth session). Here every handler is registered under its string
   * pattern (Nest's normalizePattern keeps a string as it is), and `routes()` refuses anything but
   * plain dot-separated tokens at listen, so the pattern is its own key.
   */
  protected override getRouteFromPattern(pattern: string): string {
    return pattern;
  }

  /** Runs a request and returns the encoded reply. Never rejects: every failure becomes `{ err }`. */
  protected async answer(route: Route, body: string, headers: TransportHeaders): Promise<string> {
    const reply = await this.runRequest(route, body, headers);
    try {
      return encodeReply(reply);
    } catch (error) {
      // The handler's result could not be serialised (cycle, BigInt): the caller gets a generic error.
      return encodeReply({ err: toSerializedError(error, this.logger) });
    }
  }

  /** Runs the event handlers for one event. Never rejects: a failing consumer is logged, not fatal. */
  protected async consume(route: Route, body: string, headers: TransportHeaders): Promise<void> {
    try {
      const { data } = decodeRequest(body);
      const context = new TransportContext(route.subject, headers);
      await this.handleEvent(route.pattern, { pattern: route.pattern, data }, context);
    } catch (error) {
      this.logger.error(`Event on ${route.subject} was not processed: ${(error as Error)?.message ?? error}`);
    }
  }

  private async runRequest(route: Route, body: string, headers: TransportHeaders): Promise<ReplyEnvelope> {
    const handler: MessageHandler | undefined = this.messageHandlers.get(route.pattern);
    if (!handler) return { err: noResponder(route.subject).toJSON() };
    let data: unknown;
    try {
      ({ data } = decodeRequest(body));
    } catch (error) {
      return { err: toSerializedError(error, this.logger) };
    }
    const context = new TransportContext(route.subject, headers);

    return new Promise<ReplyEnvelope>((resolve) => {
      // Nest streams a handler's result as packets; request/reply keeps the last value, or the error.
      let settled = false;
      let last: unknown;
      const settle = (reply: ReplyEnvelope) => {
        if (!settled) {
          settled = true;
          resolve(reply);
        }
      };
      const respond = (packet: WritePacket) => {
        if (packet.err !== undefined) return settle({ err: toSerializedError(packet.err, this.logger) });
        if ('response' in packet) last = packet.response;
        if (packet.isDisposed) settle({ data: last });
      };
      // What Nest's handleRequest does, without the stream it builds around a plain value: Nest's
      // handler (pipes, guards, filters) resolves to the handler's value, or to an Observable (a
      // handler's stream, or the error an exception filter made of a throw). A value is the reply
      // as it is; an Observable is replied as Nest replies it. Nearly every handler answers a value,
      // and the stream (fromPromise, mergeMap, of, catchError, finalize, a tick) was about a fifth
      // of what an RPC hop allocates (docs/performance.md, seventeenth session).
      // The processing hooks run around it as they would around handleRequest; the promise rejects
      // only if the handler itself rejected outside Nest's exception zone.
      const run = this.runWithProcessingHooks(context, async (runEndHook) => {
        const result: unknown = await handler(data, context);
        if (!isObservable(result)) {
          runEndHook();
          return settle({ data: result });
        }
        this.send(result.pipe(finalize(runEndHook)), respond);
      }) as unknown as Promise<void> | void;
      Promise.resolve(run).catch((error: unknown) => settle({ err: toSerializedError(error, this.logger) }));
    });
  }
}
