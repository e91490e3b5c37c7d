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

/** Lets the event loop turn once: pending access lines are written by then. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('AccessLog', () => {
  afterEach(() => jest.useRealTimers());

  it.each([
    ['a plain request', entry()],
    ['a URL with quotes, backslashes, control and non-ASCII characters', entry({ url: '/api/v1/x?q="a\\b"\n\u0001é…', route: 'unmatched', status: 404 })],
    ['a client-chosen request id and a slow error', entry({ requestId: 'client:abc-123.XYZ_9', method: 'POST', status: 503, durationMs: 1234.5 })],
  ])('writes exactly the line pino writes for the same fields: %s', async (_name, e) => {
    jest.useFakeTimers({ now: new Date('2026-11-22T18:00:00.123Z'), doNotFake: ['setImmediate'] });
    const fast = capture();
    const reference = capture();
    new AccessLog(createLogger({ service: 'gateway', country: 'US', destination: fast.destination }).child({ context: 'http' })).write(e);
    await nextTurn();
    throughPino(createLogger({ service: 'gateway', country: 'US', destination: reference.destination }).child({ context: 'http' }), e);
    expect(fast.lines).toHaveLength(1);
    expect(fast.lines[0]).toBe(reference.lines[0]);
    expect(JSON.parse(fast.lines[0])).toMatchObject({ level: 'info', service: 'gateway', country: 'US', context: 'http', url: e.url, msg: 'request completed' });
  });

  it('writes nothing when the logger is above info', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'gateway', country: 'US', destination, level: 'warn' });
    const log = new AccessLog(logger);
    log.write(entry());
    await nextTurn();
    expect(lines).toEqual([]);
    logger.level = 'info';
    log.write(entry());
    await nextTurn();
    expect(lines).toHaveLength(1);
  });

  it("hands one turn's lines to the destination in one write, once the turn is over", async () => {
    const { lines, destination } = capture();
    const log = new AccessLog(createLogger({ service: 'gateway', country: 'US', destination }));
    log.write(entry({ requestId: 'req_one' }));
    log.write(entry({ requestId: 'req_two' }));
    log.write(entry({ requestId: 'req_three' }));
    expect(lines).toEqual([]);
    await nextTurn();
    expect(lines).toHaveLength(1);
    expect(lines[0].split('\n').filter(Boolean).map((line) => JSON.parse(line).request_id)).toEqual(['req_one', 'req_two', 'req_three']);
    log.write(entry({ requestId: 'req_four' }));
    log.flush(); // what the process's exit handler does
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1])).toMatchObject({ request_id: 'req_four' });
    await nextTurn();
    expect(lines).toHaveLength(2); // the scheduled flush found nothing left
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

  it('writes pending lines when the process exits before the turn is over (built library, as shipped)', () => {
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
