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
 * Lines are handed to the destination once per turn of the event loop (`setImmediate`), all of that
 * turn's lines in one write: a busy gateway finishes several requests per turn, and the destination's
 * per-write work (pino's sonic-boom measures its whole pending buffer on every write, and starts a
 * file write whenever none is running) was a measurable part of a request. An access line can
 * therefore follow another line logged later in the same turn; each line carries its own time. Lines
 * still pending when the process exits are written before pino's own exit flush.
 */
export class AccessLog {
  private readonly stream: pino.DestinationStream;
  private readonly bindings: string;
  private readonly direct: boolean;
  private pending = '';
  private scheduled = false;
  private readonly flushNow = () => this.flush();

  constructor(private readonly logger: Logger) {
    const internals = logger as unknown as Record<symbol, unknown>;
    this.stream = internals[pino.symbols.streamSym] as pino.DestinationStream;
    this.bindings = (internals[pino.symbols.chindingsSym] as string | undefined) ?? '';
    const needsMetadata = (this.stream as unknown as Record<symbol, unknown>)[pino.symbols.needsMetadataGsym] === true;
    this.direct = !needsMetadata && typeof this.stream?.write === 'function';
  }

  /** Writes the pending lines now (also run at process exit, and by tests). */
  flush(): void {
    this.scheduled = false;
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
    if (!this.scheduled) {
      this.scheduled = true;
      awaitingFlush.add(this);
      flushAtExit();
      setImmediate(this.flushNow);
    }
  }
}
