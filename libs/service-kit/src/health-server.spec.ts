import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startHealthServer } from './health-server';

describe('startHealthServer', () => {
  const logger = pino({ level: 'silent' });

  async function probe(database: () => Promise<unknown>, transport: () => string | undefined) {
    const server = await startHealthServer({ port: 0, host: '127.0.0.1', logger, database, transport, timeoutMs: 100 });
    const { port } = server.address() as AddressInfo;
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: answer.status, body: await answer.json(), alive: (await fetch(`http://127.0.0.1:${port}/healthz`)).status };
    } finally {
      server.close();
    }
  }

  it('is ready only with the database answering and the transport connected; alive either way', async () => {
    expect(await probe(async () => 1, () => 'connected')).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', transport: 'ok' } }, alive: 200 });
    for (const status of ['disconnected', 'reconnecting', undefined]) {
      expect(await probe(async () => 1, () => status)).toEqual({ status: 503, body: { status: 'not_ready', checks: { database: 'ok', transport: 'failed' } }, alive: 200 });
    }
    expect(await probe(() => Promise.reject(new Error('connection refused')), () => 'connected')).toMatchObject({ status: 503, body: { checks: { database: 'failed', transport: 'ok' } } });
  });

  it('counts a database that does not answer within the timeout as failed', async () => {
    expect(await probe(() => new Promise(() => undefined), () => 'connected')).toMatchObject({ status: 503, body: { checks: { database: 'failed' } } });
  });
});
