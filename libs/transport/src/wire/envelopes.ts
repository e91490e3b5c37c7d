import { DomainError, SerializedDomainError } from '@dcr/domain';
import { fromSerializedError, internalError } from './rpc-errors';

/**
 * The JSON bodies on the wire. Both transports carry exactly these strings, so nothing passes by
 * reference in-process and a payload that survives one transport survives the other.
 */
export interface RequestEnvelope {
  data: unknown;
}

export type ReplyEnvelope = { data: unknown } | { err: SerializedDomainError };

/** Throws a TypeError for values JSON cannot carry (cycles, BigInt): a programming error of the sender. */
export function encodeRequest(data: unknown): string {
  try {
    return JSON.stringify({ data } satisfies RequestEnvelope);
  } catch (error) {
    throw new TypeError(`The message payload cannot be serialised as JSON: ${(error as Error).message}`);
  }
}

export function decodeRequest(body: string): RequestEnvelope {
  const parsed = parseObject(body);
  if (!parsed || !('data' in parsed)) {
    throw new DomainError('invalid_request', 'The message is not a JSON request envelope');
  }
  return { data: parsed.data };
}

/** `undefined` becomes `null` so that a void handler still answers with one value the caller can await. */
export function encodeReply(reply: ReplyEnvelope): string {
  return JSON.stringify('err' in reply ? { err: reply.err } : { data: reply.data ?? null });
}

/** Turns a reply body into the value a caller receives, or the DomainError it must see. */
export function decodeReply(body: string): { data: unknown } | { error: DomainError } {
  const parsed = parseObject(body);
  if (parsed && 'err' in parsed) return { error: fromSerializedError(parsed.err) };
  if (parsed && 'data' in parsed) return { data: parsed.data };
  return { error: internalError() };
}

function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
