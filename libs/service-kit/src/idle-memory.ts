import { performance } from 'node:perf_hooks';

/** Below this share of busy event-loop time a check period counts as quiet. */
const QUIET_UTILIZATION = 0.05;
/** A quiet process collects again once its heap has grown this much since the last collection. */
const GROWTH_BYTES = 4 * 1024 * 1024;
/** After a busy period, quiet periods keep collecting until the heap shrinks, at most this many times. */
const SHRINK_ATTEMPTS = 8;

export interface IdleMemoryOptions {
  checkEveryMs?: number;
  /** A full collection (default: `gc` of `node --expose-gc`; none: do nothing). */
  collect?: () => void;
  /** The heap's size (default: process.memoryUsage()). */
  heap?: () => { heapUsed: number; heapTotal: number };
}

/**
 * Gives memory back to the machine when the process is quiet. V8 keeps the heap it grew to during
 * start-up or a burst of work (a third of an idle service's resident memory here) until it next
 * needs a full collection, which an idle process may not for a long time. When collections can be
 * asked for (`node --expose-gc`, which every launcher here sets), quiet check periods (less than 5 %
 * busy) run a full collection after a busy period (start-up included), repeating each period until
 * the heap actually shrinks (V8 keeps its young generation large while it still estimates a high
 * allocation rate, so the first collections after work often give nothing back), and again whenever
 * the heap has grown by 4 MiB since the last one (a poller's slow garbage). Each is a pause of a few
 * tens of milliseconds, taken only when nothing is waiting; busy periods never collect. Without
 * `--expose-gc` this does nothing. Answers a function that stops it.
 */
export function reclaimMemoryWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const { checkEveryMs = 5_000, collect = (globalThis as { gc?: () => void }).gc, heap = () => process.memoryUsage() } = options;
  if (typeof collect !== 'function') return () => undefined;
  let mark = performance.eventLoopUtilization();
  let busy = true;
  let attempts = 0;
  let heapAfterCollection = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const period = performance.eventLoopUtilization(now, mark);
    mark = now;
    if (period.utilization > QUIET_UTILIZATION) {
      busy = true;
      return;
    }
    if (busy) {
      busy = false;
      attempts = SHRINK_ATTEMPTS;
    } else if (attempts === 0 && heap().heapUsed - heapAfterCollection < GROWTH_BYTES) {
      return;
    }
    const before = heap().heapTotal;
    collect();
    const after = heap();
    attempts = after.heapTotal < before ? 0 : Math.max(0, attempts - 1);
    heapAfterCollection = after.heapUsed;
  }, checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
