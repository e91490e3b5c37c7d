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
  /** Pending bytes (UTF-8) that make the lines go at once. */
  flushBytes?: number;
  /** The longest a line waits. */
  flushDelayMs?: number;
}

const jsonString = (value: string): string => (NEEDS_NO_ESCAPING.test(value) ? `"${value}"` : JSON.stringify(value));

/**
 * The same text as one contiguous string. A string joined from pieces is a tree of them, walked
 * again each time it is copied into a larger one; the parts every line repeats are made contiguous
 * once instead (through a UTF-8 round trip, which makes a new string of one piece).
 */
const contiguous = (value: string): string => Buffer.from(value, 'utf8').toString('utf8');

/**
 * Writes the gateway's access line (one per request) straight to the logger's destination, with the
 * exact shape pino gives the same fields through `logger.info(fields, 'request completed')`:
 * `{"level":"info","time":…,<the logger's bindings>,"request_id":…,"method":…,"url":…,"route":…,
 * "status":…,"duration_ms":…,"msg":"request completed"}`. It skips pino's general serialisation of
 * an arbitrary object, which was most of the access line's cost on the busiest route. The logger's
 * level is honoured; a destination that needs pino's per-line metadata (a multistream routing by
 * level) gets the line through `logger.info` instead.
 *
 * Lines are held and handed to the destination together: once 64 KiB are pending, or 100 ms after
 * the first pending line, whichever comes first (`AccessLogOptions`). They are held as UTF-8 in a
 * buffer of the log's own, each copied there as it is made, and handed over as one string decoded
 * from it: held as a string grown line by line, they were a tree of about a thousand small pieces
 * that the destination's length count walked at each hand-over (4.8 % of the process's time on
 * `GET /api/v1/me`, docs/performance.md, twenty-third session). What lines repeat is made once: the
 * start up to the request id for each millisecond, and the method, URL and route fields while they
 * stay the same (the same route answered again). Each hand-over is a file write on a thread of
 * libuv's pool, and one per turn of the event loop (an earlier rule) cost the busiest route about
 * 5 µs of a request, most of it that thread's system call and the wake-ups around it (a V8 profile
 * of `GET /api/v1/me`, docs/performance.md). At 10,000 requests/s that is about 40
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
  /** The held lines, as UTF-8: `used` bytes of `pending`. */
  private readonly pending: Buffer;
  private used = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly flushBytes: number;
  private readonly flushDelayMs: number;
  private readonly flushNow = () => this.flush();
  /** A line's start up to its request id (level, time, bindings), for the time it was made with. */
  private head = '';
  private headTime = '';
  /** The last line's method, URL and route, and the line's part from after its request id to its status. */
  private lastMethod = '';
  private lastUrl = '';
  private lastRoute = '';
  private lastFields = '';

  constructor(private readonly logger: Logger, options: AccessLogOptions = {}) {
    this.flushBytes = options.flushBytes ?? 64 * 1024;
    this.flushDelayMs = options.flushDelayMs ?? 100;
    // Room for the limit and one more ordinary line, so that a line is copied whole or not at all.
    this.pending = Buffer.allocUnsafe(this.flushBytes + 4096);
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
    if (this.used === 0) return;
    const lines = this.pending.toString('utf8', 0, this.used);
    this.used = 0;
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
    if (entry.method !== this.lastMethod || entry.url !== this.lastUrl || entry.route !== this.lastRoute) {
      this.lastMethod = entry.method;
      this.lastUrl = entry.url;
      this.lastRoute = entry.route;
      this.lastFields = contiguous(`,"method":${jsonString(entry.method)},"url":${jsonString(entry.url)},"route":${jsonString(entry.route)},"status":`);
    }
    const time = isoTimeOncePerMillisecond();
    if (time !== this.headTime) {
      this.headTime = time;
      this.head = contiguous(`{"level":"info"${time}${this.bindings},"request_id":`);
    }
    const line = `${this.head}${jsonString(entry.requestId)}${this.lastFields}${entry.status},"duration_ms":${durationMs},"msg":"request completed"}\n`;
    // A UTF-16 unit takes at most three bytes of UTF-8: a line that might not fit sends the held
    // ones first, and one larger than the whole buffer goes on its own, after them.
    const room = line.length * 3;
    if (this.used + room > this.pending.length) this.flush();
    if (room > this.pending.length) {
      this.stream.write(line);
      return;
    }
    this.used += this.pending.write(line, this.used);
    if (this.used >= this.flushBytes) {
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
