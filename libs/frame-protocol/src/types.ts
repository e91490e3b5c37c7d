/** postMessage protocol version 2 between the hosted decision frame and its host. */
export const FRAME_PROTOCOL_VERSION = 2 as const;

/** Base of every schema `$id`; a schema's id is this plus its name plus `.json`. */
export const SCHEMA_BASE_URL = 'https://schemas.decision-service.dev/frame/v2/';

/** The closed enum of message types. */
export const MESSAGE_TYPES = [
  'service:ready',
  'service:state',
  'service:complete',
  'service:cancel',
  'service:error',
  'service:resize',
  'service:deadline',
] as const;
export type FrameMessageType = (typeof MESSAGE_TYPES)[number];

// The kinds, the nine statuses and the outcomes are the domain's; the protocol only carries them.
export { DECISION_KINDS, DECISION_STATUSES } from '@dcr/domain';
export type { DecisionKind, DecisionStatus } from '@dcr/domain';
import type { ApprovalOutcome, ConsentOutcome, DecisionKind, DecisionStatus } from '@dcr/domain';

export const DELIVERY_MODES = ['embed', 'popup', 'redirect', 'direct'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];

export { APPROVAL_OUTCOMES, CONSENT_OUTCOMES } from '@dcr/domain';
export type { ApprovalOutcome, ConsentOutcome } from '@dcr/domain';

/** Seconds before the deadline at which `service:deadline` fires; 0 is level `expired`. */
export const DEADLINE_MARKS = [30, 15, 5, 0] as const;
export type DeadlineMark = (typeof DEADLINE_MARKS)[number];

/**
 * The ordered statuses of each session path. `step_index` in a consent `service:state` message is the
 * 0-based position of `to` in this list and `total_steps` its length; a move to `expired` or `revoked`
 * keeps the index of the last step reached.
 */
export const SESSION_PATHS = {
  standard: ['pending', 'authenticating', 'verifying', 'reviewing', 'fulfilled'],
  informed: ['pending', 'informed', 'evidenced', 'fulfilled'],
} as const satisfies Record<string, readonly DecisionStatus[]>;
export type SessionPath = keyof typeof SESSION_PATHS;

/** `step_index` and `total_steps` of a transition, per the rule of {@link SESSION_PATHS}. */
export function stepPosition(path: SessionPath, from: DecisionStatus, to: DecisionStatus): { step_index: number; total_steps: number } {
  const steps: readonly DecisionStatus[] = SESSION_PATHS[path];
  let index = steps.indexOf(to);
  if (index < 0) index = steps.indexOf(from);
  if (index < 0) index = from === 'revoked' || from === 'expired' ? steps.length - 1 : 0;
  return { step_index: index, total_steps: steps.length };
}

export interface ReadyPayload {
  kind: DecisionKind;
  session_token: string;
  deadline_at: string | null;
  branding: Record<string, unknown>;
  mode: DeliveryMode;
  locale: string;
}
export interface ConsentStatePayload {
  from: DecisionStatus;
  to: DecisionStatus;
  step_index: number;
  total_steps: number;
}
export interface ApprovalStatePayload {
  from: DecisionStatus;
  to: DecisionStatus;
  kind_payload: Record<string, unknown>;
}
export interface CompletePayload<O extends string = ConsentOutcome | ApprovalOutcome> {
  outcome: O;
  exchange_token: string;
  completed_at: string;
}
export interface CancelPayload {
  reason: string;
  cancelled_by: 'user' | 'host';
}
export interface ErrorPayload {
  code: string;
  message: string;
  fatal: boolean;
  recoverable_via: string | null;
}
export interface ResizePayload {
  height: number;
}
export interface DeadlinePayload {
  remaining_seconds: DeadlineMark;
  level: 'warning' | 'expired';
  deadline_at: string;
}

/** The payload type of a message type for a kind. */
export type PayloadFor<T extends FrameMessageType, K extends DecisionKind> = T extends 'service:ready'
  ? ReadyPayload
  : T extends 'service:state'
    ? K extends 'consent'
      ? ConsentStatePayload
      : ApprovalStatePayload
    : T extends 'service:complete'
      ? K extends 'consent'
        ? CompletePayload<ConsentOutcome>
        : CompletePayload<ApprovalOutcome>
      : T extends 'service:cancel'
        ? CancelPayload
        : T extends 'service:error'
          ? ErrorPayload
          : T extends 'service:resize'
            ? ResizePayload
            : T extends 'service:deadline'
              ? DeadlinePayload
              : never;

/** The six-field envelope. */
export interface FrameEnvelope<T extends FrameMessageType = FrameMessageType, K extends DecisionKind = DecisionKind, P = PayloadFor<T, K>> {
  type: T;
  kind: K;
  version: typeof FRAME_PROTOCOL_VERSION;
  payload: P;
  /** ISO 8601 UTC. */
  ts: string;
  /** UUID v4. */
  message_id: string;
}

type MessageOf<T extends FrameMessageType, K extends DecisionKind> = FrameEnvelope<T, K, PayloadFor<T, K>>;
export type ReadyMessage<K extends DecisionKind = DecisionKind> = MessageOf<'service:ready', K>;
export type StateMessage<K extends DecisionKind = DecisionKind> = K extends DecisionKind ? MessageOf<'service:state', K> : never;
export type CompleteMessage<K extends DecisionKind = DecisionKind> = K extends DecisionKind ? MessageOf<'service:complete', K> : never;
export type CancelMessage<K extends DecisionKind = DecisionKind> = MessageOf<'service:cancel', K>;
export type ErrorMessage<K extends DecisionKind = DecisionKind> = MessageOf<'service:error', K>;
export type ResizeMessage<K extends DecisionKind = DecisionKind> = MessageOf<'service:resize', K>;
export type DeadlineMessage<K extends DecisionKind = DecisionKind> = MessageOf<'service:deadline', K>;
/** Any valid frame message. */
export type FrameMessage =
  | ReadyMessage
  | StateMessage
  | CompleteMessage
  | CancelMessage
  | ErrorMessage
  | ResizeMessage
  | DeadlineMessage;
