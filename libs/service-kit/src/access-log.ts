import pino, { Logger } from 'pino';
import { isoTimeOncePerMillisecond } from './logger';

/** One answered HTTP request, as the access line records it. */
export interface AccessEntry {
  requestId: string;
  method: string;
  /** Already made loggable (no query values that could be personal data or credentials). */
  url: string;
  route: string;
  status: number;
  durationMs: number;
}

const INFO = 30;
/** Printable ASCII without `"` and `\`: such a string is its own JSON string body. */
const NEEDS_NO_ESCAPING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Access logs with lines not yet handed to their destination. */
const awaitingFlush = new Set<AccessLog>();
let exitHooked = false;

/** Once per process: pending access lines are written at exit, before pino's own exit flush. */
function flushAtExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.prependListener('exit', () => {
    for (const log of [...awaitingFlush]) log.flush();
  });
}

/** When held access lines are handed to the destination (see AccessLog). */
export interface AccessLogOptions {
  /** Pending bytes (as string length) that make the lines go at once. */
  flushBytes?: number;
  /** The longest a line waits. */
  flushDelayMs?: number;
}

const jsonString = (value: string): string => (NEEDS_NO_ESCAPING.test(value) ? `"${value}"` : JSON.stringify(value));

/**
 * Writes the gateway's access line (one per request) straight to the logger's destination, with the
 * exact shape pino gives the same fields through `logger.info(fields, 'request completed')`:
 * `{"level":"info","time":…,<the logger's bindings>,"request_id":…,"method":…,"url":…,"route":…,
 * "status":…,"duration_ms":…,"msg":"request completed"}`. It skips pino's general serialisation of
 * an arbitrary object, which was most of the access line's cost on the busiest route. The logger's
 * level is honoured; a destination that needs pino's per-line metadata (a multistream routing by
 * level) gets the line through `logger.info` instead.
 *
 * Lines are held and handed to the destination together: once 16 KiB are pending, or 100 ms after
 * the first pending line, whichever comes first (`AccessLogOptions`). Each hand-over is a file write
 * on a thread of libuv's pool, and one per turn of the event loop (the previous rule) still cost the
 * busiest route about 5 µs of a request, most of it that thread's system call and the wake-ups around
 * it (a V8 profile of `GET /api/v1/me`, docs/performance.md). At 10,000 requests/s that is about 150
 * writes a second instead of thousands. The price (docs/architecture.md, Observability): an access line
 * can reach the file up to 100 ms after the request and after lines logged later; each line carries
 * its own time; a process killed outright (SIGKILL, a crash of the runtime) loses up to that much of
 * its access log, while a normal exit, the graceful stop on SIGTERM or SIGINT and an uncaught
 * exception still write every pending line first (the process's `exit` hook below). The audit trail
 * is not a log and is not affected.
 */
export class AccessLog {
  private readonly stream: pino.DestinationStream;
  private readonly bindings: string;
  private readonly direct: boolean;
  private pending = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly flushBytes: number;
  private readonly flushDelayMs: number;
  private readonly flushNow = () => this.flush();

  constructor(private readonly logger: Logger, options: AccessLogOptions = {}) {
    this.flushBytes = options.flushBytes ?? 16 * 1024;
    this.flushDelayMs = options.flushDelayMs ?? 100;
    const internals = logger as unknown as Record<symbol, unknown>;
    this.stream = internals[pino.symbols.streamSym] as pino.DestinationStream;
    this.bindings = (internals[pino.symbols.chindingsSym] as string | undefined) ?? '';
    const needsMetadata = (this.stream as unknown as Record<symbol, unknown>)[pino.symbols.needsMetadataGsym] === true;
    this.direct = !needsMetadata && typeof this.stream?.write === 'function';
  }

  /** Writes the pending lines now (also run at process exit, and by tests). */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    awaitingFlush.delete(this);
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.stream.write(lines);
  }

  write(entry: AccessEntry): void {
    if (this.logger.levelVal > INFO) return;
    const durationMs = Math.round(entry.durationMs * 100) / 100;
    if (!this.direct) {
      this.logger.info(
        { request_id: entry.requestId, method: entry.method, url: entry.url, route: entry.route, status: entry.status, duration_ms: durationMs },
        'request completed',
      );
      return;
    }
    this.pending +=
      `{"level":"info"${isoTimeOncePerMillisecond()}${this.bindings},"request_id":${jsonString(entry.requestId)},` +
      `"method":${jsonString(entry.method)},"url":${jsonString(entry.url)},"route":${jsonString(entry.route)},` +
      `"status":${entry.status},"duration_ms":${durationMs},"msg":"request completed"}\n`;
    if (this.pending.length >= this.flushBytes) {
      this.flush();
    } else if (this.timer === undefined) {
      awaitingFlush.add(this);
      flushAtExit();
      // Unreferenced: a pending access line never keeps a process alive (the exit hook writes it).
      this.timer = setTimeout(this.flushNow, this.flushDelayMs);
      this.timer.unref();
    }
  }
}
