import { randomUUID } from 'node:crypto';
import { DecisionKind, FRAME_PROTOCOL_VERSION, FrameEnvelope, FrameMessageType, PayloadFor } from './types';

export interface CreateEnvelopeOptions {
  /** Emission time (defaults to now); serialized as ISO 8601 UTC. */
  now?: Date | string | number;
  /** Message id (defaults to `crypto.randomUUID()`, a UUID v4). */
  id?: string;
}

/** Wraps a payload in the six-field version 2 envelope. */
export function createEnvelope<T extends FrameMessageType, K extends DecisionKind>(
  type: T,
  kind: K,
  payload: PayloadFor<T, K>,
  options: CreateEnvelopeOptions = {},
): FrameEnvelope<T, K> {
  const now = options.now === undefined ? new Date() : new Date(options.now);
  if (Number.isNaN(now.getTime())) throw new RangeError('createEnvelope: invalid `now`');
  return {
    type,
    kind,
    version: FRAME_PROTOCOL_VERSION,
    payload,
    ts: now.toISOString(),
    message_id: options.id ?? randomUUID(),
  };
}
