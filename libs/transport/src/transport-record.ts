import { TransportHeaders } from './wire/headers';

export interface SendOptions {
  /** Travels as NATS headers (alongside the message in-process); read with `TransportContext.getHeader`. */
  headers?: TransportHeaders;
  /** Overrides the client's timeout for this one request. */
  timeoutMs?: number;
}

/**
 * Wraps a payload with per-message options: `client.send('x.y', new TransportRecord(data, { headers }))`.
 * Only `data` is sent as the payload; the handler never sees the wrapper.
 */
export class TransportRecord<T = unknown> {
  constructor(
    readonly data: T,
    readonly options: SendOptions = {},
  ) {}
}

export const withHeaders = <T>(data: T, headers: TransportHeaders): TransportRecord<T> =>
  new TransportRecord(data, { headers });
