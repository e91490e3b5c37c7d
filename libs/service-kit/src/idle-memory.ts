import { performance } from 'node:perf_hooks';

/** Below this share of busy event-loop time a check period counts as quiet. */
const QUIET_UTILIZATION = 0.05;
/** A quiet process collects again once its heap has grown this much since the last collection. */
const GROWTH_BYTES = 4 * 1024 * 1024;
/** After a busy period, quiet periods keep collecting until the heap is compact, at most this many times. */
const SHRINK_ATTEMPTS = 8;
/** Within this of the smallest heap seen after a collection, the heap counts as compact. */
const COMPACT_SLACK_BYTES = 2 * 1024 * 1024;
/**
 * The Node.js flags every service process starts with (`npm start`, `npm run start:distributed`,
 * the image's entrypoint; a test holds them to this list), for its memory (a gateway in a process of
 * its own: GATEWAY_MEMORY_NODE_FLAGS below):
 * - `--expose-gc`: reclaimMemoryWhenIdle may ask for full collections;
 * - `--retain-maps-for-n-gc=10000`: the maps (hidden classes) that optimised code depends on outlive
 *   10,000 old-generation collections after their last use instead of V8's two. A quiet stretch runs
 *   several collections with nothing in use; with V8's default the maps of the hot paths (Node's own
 *   request, stream and `nextTick` objects among them) died in them, the same code made new ones,
 *   and it stayed about a fifth slower for the rest of the process's life (a plain Node.js HTTP
 *   server: about 104,000 requests/s before, 79,000 after two quiet stretches; the gateway's
 *   `GET /api/v1/me`: about 60,000 and 49,000; `node bench/forced-gc.js`, docs/performance.md,
 *   twenty-third session). As we read V8, the maps it retains are those optimised code names, a
 *   bounded set; idle memory did not change. The count must be given at start: set at run time, it
 *   did not help, as V8 seems to give a map its count when optimised code first names it.
 * - `--no-memory-reducer`: V8's own collections for an idle heap keep no maps at all, with the same
 *   effect after a quiet minute (the same figures); reclaimMemoryWhenIdle gives the memory back
 *   instead.
 */
export const MEMORY_NODE_FLAGS: readonly string[] = ['--expose-gc', '--retain-maps-for-n-gc=10000', '--no-memory-reducer'];

/**
 * The same for a gateway in a process of its own, without `--expose-gc`: it asks for no collections.
 * Alone in its process, the gateway's hot maps still died in the reclaimer's collections despite the
 * retention flag (the same runtime path in a perf profile; not understood: in the embedded process,
 * where the other services keep using Node's request and stream objects while the gateway is quiet,
 * they do not), and `GET /api/v1/me` stayed at about 48,000-51,000 requests/s after a quiet
 * stretch against 60,000-66,000 without the collections. Its idle memory is about 15 MiB more
 * (docs/performance.md, twenty-third session).
 */
export const GATEWAY_MEMORY_NODE_FLAGS: readonly string[] = MEMORY_NODE_FLAGS.filter((flag) => flag !== '--expose-gc');

export interface IdleMemoryOptions {
  checkEveryMs?: number;
  /** A full collection (default: `gc` of `node --expose-gc`; none: do nothing). */
  collect?: () => void;
  /** The heap's size (default: process.memoryUsage()). */
  heap?: () => { heapUsed: number; heapTotal: number };
  /** The busy share of the check period just ended (default: the event loop's utilization). */
  busyShare?: () => number;
  /** The flags the process was started with (default: its exec arguments and NODE_OPTIONS). */
  nodeFlags?: readonly string[];
}

/** The event loop's utilization since the previous call. */
function eventLoopBusyShare(): () => number {
  let mark = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const period = performance.eventLoopUtilization(now, mark);
    mark = now;
    return period.utilization;
  };
}

/**
 * Gives memory back to the machine when the process is quiet. V8 keeps the heap it grew to during
 * start-up or a burst of work (a third of an idle service's resident memory here) until it next
 * needs a full collection, which an idle process may not for a long time. When collections can be
 * asked for (`node --expose-gc`, which every launcher here sets), quiet check periods (less than 5 %
 * busy) run a full collection after a busy period (start-up included), repeating each period until
 * the heap shrinks or is as compact as it has been after an earlier collection (V8 keeps its young generation large while
 * it still estimates a high allocation rate, so the first collections after work often give nothing
 * back), and again whenever the heap has grown by 4 MiB since the last one (a poller's slow garbage).
 * Each is a pause of a few tens of milliseconds, taken only when nothing is waiting; busy periods
 * never collect. Without `--expose-gc`, and without `--retain-maps-for-n-gc` (see MEMORY_NODE_FLAGS:
 * a process whose maps die in these collections is left slower by them), this does nothing.
 * Answers a function that stops it.
 */
export function reclaimMemoryWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const { checkEveryMs = 5_000, collect = (globalThis as { gc?: () => void }).gc, heap = () => process.memoryUsage() } = options;
  if (typeof collect !== 'function') return () => undefined;
  const nodeFlags = options.nodeFlags ?? [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (!nodeFlags.some((flag) => /^--retain[-_]maps[-_]for[-_]n[-_]gc=/.test(flag))) return () => undefined;
  const busyShare = options.busyShare ?? eventLoopBusyShare();
  let busy = true;
  let attempts = 0;
  let heapAfterCollection = 0;
  let compactTotal = Number.POSITIVE_INFINITY;
  const timer = setInterval(() => {
    if (busyShare() > QUIET_UTILIZATION) {
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
    heapAfterCollection = after.heapUsed;
    if (after.heapTotal < before) {
      compactTotal = Math.min(compactTotal, after.heapTotal);
      attempts = 0;
    } else if (Number.isFinite(compactTotal) && after.heapTotal <= compactTotal + COMPACT_SLACK_BYTES) {
      attempts = 0; // as compact as it has been: nothing more to give back
    } else {
      attempts = Math.max(0, attempts - 1);
    }
  }, checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
