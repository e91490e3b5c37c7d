import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import { AccessEntry, AccessLog } from './access-log';
import { createLogger } from './logger';

/** A destination keeping every line written to it. */
function capture(): { lines: string[]; destination: pino.DestinationStream } {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

const entry = (overrides: Partial<AccessEntry> = {}): AccessEntry => ({
  requestId: 'req_fz7w8i15rvd6of9f',
  method: 'GET',
  url: '/api/v1/me',
  route: '/api/v1/me',
  status: 200,
  durationMs: 1.23456,
  ...overrides,
});

/** The same entry through pino's own serialisation, as the gateway logged it before. */
function throughPino(logger: pino.Logger, e: AccessEntry): void {
  logger.info(
    { request_id: e.requestId, method: e.method, url: e.url, route: e.route, status: e.status, duration_ms: Math.round(e.durationMs * 100) / 100 },
    'request completed',
  );
}

describe('AccessLog', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-22T18:00:00.123Z') }));
  afterEach(() => jest.useRealTimers());
  /** Past the longest a pending line waits (100 ms): every line written so far has gone out. */
  const afterDelay = () => jest.advanceTimersByTime(100);

  it.each([
    ['a plain request', entry()],
    ['a URL with quotes, backslashes, control and non-ASCII characters', entry({ url: '/api/v1/x?q="a\\b"\n\u0001é…', route: 'unmatched', status: 404 })],
    ['a client-chosen request id and a slow error', entry({ requestId: 'client:abc-123.XYZ_9', method: 'POST', status: 503, durationMs: 1234.5 })],
  ])('writes exactly the line pino writes for the same fields: %s', (_name, e) => {
    const fast = capture();
    const reference = capture();
    new AccessLog(createLogger({ service: 'gateway', country: 'US', destination: fast.destination }).child({ context: 'http' })).write(e);
    throughPino(createLogger({ service: 'gateway', country: 'US', destination: reference.destination }).child({ context: 'http' }), e);
    afterDelay(); // the same millisecond for both lines; then the held line goes out
    expect(fast.lines).toHaveLength(1);
    expect(fast.lines[0]).toBe(reference.lines[0]);
    expect(JSON.parse(fast.lines[0])).toMatchObject({ level: 'info', service: 'gateway', country: 'US', context: 'http', url: e.url, msg: 'request completed' });
  });

  it('writes nothing when the logger is above info', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'gateway', country: 'US', destination, level: 'warn' });
    const log = new AccessLog(logger);
    log.write(entry());
    afterDelay();
    expect(lines).toEqual([]);
    logger.level = 'info';
    log.write(entry());
    afterDelay();
    expect(lines).toHaveLength(1);
  });

  it('holds lines for 100 ms after the first, then hands them to the destination in one write', () => {
    const { lines, destination } = capture();
    const log = new AccessLog(createLogger({ service: 'gateway', country: 'US', destination }));
    log.write(entry({ requestId: 'req_one' }));
    jest.advanceTimersByTime(60);
    log.write(entry({ requestId: 'req_two' }));
    log.write(entry({ requestId: 'req_three' }));
    jest.advanceTimersByTime(39);
    expect(lines).toEqual([]);
    jest.advanceTimersByTime(1); // 100 ms after the first line, not after the last
    expect(lines).toHaveLength(1);
    expect(lines[0].split('\n').filter(Boolean).map((line) => JSON.parse(line).request_id)).toEqual(['req_one', 'req_two', 'req_three']);
    log.write(entry({ requestId: 'req_four' }));
    log.flush(); // what the process's exit handler does
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1])).toMatchObject({ request_id: 'req_four' });
    afterDelay();
    expect(lines).toHaveLength(2); // the flush cancelled the timer: nothing is written twice or empty
    expect(jest.getTimerCount()).toBe(0);
  });

  it('writes at once when the pending lines reach the size limit, without waiting for the delay', () => {
    const { lines, destination } = capture();
    const log = new AccessLog(createLogger({ service: 'gateway', country: 'US', destination }), { flushBytes: 600 });
    log.write(entry({ requestId: 'req_a' }));
    log.write(entry({ requestId: 'req_b' }));
    expect(lines).toEqual([]); // two lines are under 600 characters
    log.write(entry({ requestId: 'req_c' }));
    expect(lines).toHaveLength(1);
    expect(lines[0].split('\n').filter(Boolean).map((line) => JSON.parse(line).request_id)).toEqual(['req_a', 'req_b', 'req_c']);
    expect(jest.getTimerCount()).toBe(0);
    log.write(entry({ requestId: 'req_d' }));
    afterDelay();
    expect(lines.map((chunk) => chunk.split('\n').filter(Boolean).length)).toEqual([3, 1]);
  });

  it('keeps each line its own method, URL and route when routes alternate', () => {
    const { lines, destination } = capture();
    const log = new AccessLog(createLogger({ service: 'gateway', country: 'US', destination }));
    const answered = [
      entry({ requestId: 'req_1' }),
      entry({ requestId: 'req_2', method: 'POST', url: '/api/v1/decisions', route: '/api/v1/decisions', status: 201 }),
      entry({ requestId: 'req_3' }),
      entry({ requestId: 'req_4', url: '/api/v1/decisions/dec_1', route: '/api/v1/decisions/:id' }),
      entry({ requestId: 'req_5', url: '/api/v1/decisions/dec_2', route: '/api/v1/decisions/:id' }),
    ];
    for (const e of answered) log.write(e);
    log.flush();
    expect(lines[0].split('\n').filter(Boolean).map((line) => JSON.parse(line))).toEqual(
      answered.map((e) => expect.objectContaining({ request_id: e.requestId, method: e.method, url: e.url, route: e.route, status: e.status })),
    );
  });

  it('sends a line longer than the whole buffer on its own, after the lines held before it', () => {
    const { lines, destination } = capture();
    const log = new AccessLog(createLogger({ service: 'gateway', country: 'US', destination }), { flushBytes: 600 });
    const long = `/api/v1/${'é'.repeat(3000)}`;
    log.write(entry({ requestId: 'req_before' }));
    log.write(entry({ requestId: 'req_long', url: long, route: 'unmatched', status: 404 }));
    log.write(entry({ requestId: 'req_after' }));
    log.flush();
    expect(lines.map((chunk) => chunk.split('\n').filter(Boolean).map((line) => JSON.parse(line).request_id))).toEqual([['req_before'], ['req_long'], ['req_after']]);
    expect(JSON.parse(lines[1]).url).toBe(long);
  });

  it('goes through pino when the destination routes lines by level (a multistream)', () => {
    const info = capture();
    const errors = capture();
    const logger = createLogger({
      service: 'gateway',
      country: 'US',
      destination: pino.multistream([
        { level: 'info', stream: info.destination },
        { level: 'error', stream: errors.destination },
      ]),
    });
    new AccessLog(logger).write(entry({ status: 500 }));
    expect(info.lines).toHaveLength(1);
    expect(JSON.parse(info.lines[0])).toMatchObject({ level: 'info', status: 500, msg: 'request completed' });
    expect(errors.lines).toEqual([]);
  });

  it('writes pending lines when the process exits before they are due (built library, as shipped)', () => {
    const library = join(__dirname, '..', 'dist', 'index.js');
    const script = `
      const { AccessLog, createLogger } = require(${JSON.stringify(library)});
      const log = new AccessLog(createLogger({ service: 'gateway', country: 'US' }));
      log.write({ requestId: 'req_at_exit', method: 'GET', url: '/healthz', route: '/healthz', status: 200, durationMs: 1 });
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ request_id: 'req_at_exit', msg: 'request completed' }),
    ]);
  });
});
