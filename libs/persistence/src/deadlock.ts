/** PostgreSQL's SQLSTATE for "deadlock detected": the statement or transaction it ended was undone whole. */
export const DEADLOCK_DETECTED = '40P01';

/** Whether an error (a QueryFailedError carries the driver's `code`) is PostgreSQL's deadlock. */
export function isDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DEADLOCK_DETECTED;
}

/**
 * Runs `work` again when PostgreSQL ended it as a deadlock's victim, up to `tries` times in all (the
 * last try's error is thrown). Only for work that is a whole autocommit statement or a whole
 * transaction: the deadlock undid all of it, so running it again is running it later. For writers
 * whose order of locks cannot be made one (a statement that locks in two passes), so that the
 * writer PostgreSQL picks as the victim waits for the others instead of failing.
 */
export async function retriedOnDeadlock<T>(work: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= tries || !isDeadlock(error)) throw error;
    }
  }
}
