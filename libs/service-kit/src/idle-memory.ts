import { performance } from 'node:perf_hooks';

/** Below this share of busy event-loop time a check period counts as quiet. */
const QUIET_UTILIZATION = 0.05;

/**
 * Gives memory back to the machine when the process goes quiet. V8 keeps the heap it grew to during
 * start-up or a burst of work (a third of an idle service's resident memory here) until it next
 * needs a full collection, which an idle process never does. When collections can be asked for
 * (`node --expose-gc`, which every launcher here sets), one full collection runs after each busy
 * period (start-up included) once a whole check period has been quiet: a pause of a few tens of
 * milliseconds, taken only when nothing is waiting. Without `--expose-gc` this does nothing.
 * Answers a function that stops it.
 */
export function reclaimMemoryWhenIdle(checkEveryMs = 10_000): () => void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (typeof collect !== 'function') return () => undefined;
  let mark = performance.eventLoopUtilization();
  let busySinceCollection = true;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const period = performance.eventLoopUtilization(now, mark);
    mark = now;
    if (period.utilization > QUIET_UTILIZATION) {
      busySinceCollection = true;
    } else if (busySinceCollection) {
      busySinceCollection = false;
      collect();
    }
  }, checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
