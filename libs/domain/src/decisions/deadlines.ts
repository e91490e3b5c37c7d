/** Seconds before the deadline at which a `service:deadline` message fires: T-30s, T-15s, T-5s, T-0. */
export const DEADLINE_TICKS_SECONDS = [30, 15, 5, 0] as const;

export type DeadlineLevel = 'warning' | 'expired';

/** `warning` while time remains (> 0 seconds), `expired` at (or past) the deadline. */
export function deadlineLevel(remainingSeconds: number): DeadlineLevel {
  if (typeof remainingSeconds !== 'number' || Number.isNaN(remainingSeconds)) {
    throw new RangeError('remainingSeconds must be a number');
  }
  return remainingSeconds > 0 ? 'warning' : 'expired';
}

/** One `service:deadline` message due for a deadline: its payload and when it fires. */
export interface DeadlineTick {
  remaining_seconds: number;
  level: DeadlineLevel;
  deadline_at: string;
  fires_at: Date;
}

/**
 * The deadline messages of a session whose deadline is `deadlineAt`, earliest first. With `now`,
 * only the ticks still to come (fires_at > now) are returned, and T-0 always: a session already
 * past its deadline still gets its `expired` message.
 */
export function deadlineTicks(deadlineAt: Date, now?: Date): DeadlineTick[] {
  const deadline = deadlineAt.getTime();
  if (!Number.isFinite(deadline)) throw new RangeError('deadlineAt must be a valid date');
  const iso = deadlineAt.toISOString();
  return DEADLINE_TICKS_SECONDS.map((seconds) => ({
    remaining_seconds: seconds,
    level: deadlineLevel(seconds),
    deadline_at: iso,
    fires_at: new Date(deadline - seconds * 1000),
  })).filter((tick) => now === undefined || tick.remaining_seconds === 0 || tick.fires_at.getTime() > now.getTime());
}
