import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AddressInfo, createConnection, createServer } from 'node:net';
import { DomainError } from '@dcr/domain';
import type { NatsConnection } from 'nats';
import { lastValueFrom } from 'rxjs';
import { NatsCountryClient } from './client/nats-country-client';
import { NatsCountryServer } from './server/nats-country-server';
import { describeTransportContract } from './testing/transport-contract';

// The real NATS server of this machine (never a mock); NATS_URL points elsewhere if needed.
const servers = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

describeTransportContract('NATS', () => ({
  createServer: (options) => new NatsCountryServer({ ...options, servers }),
  createClient: (options) => new NatsCountryClient({ ...options, servers }),
}));

describe('NATS client while its broker is gone', () => {
  const binary = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
  let broker: ChildProcess | undefined;
  let port: number;

  /** A NATS server of this test's own (the machine's is shared), on a free port. */
  async function startBroker(): Promise<void> {
    broker = spawn(binary, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    for (let attempt = 0; attempt < 100; attempt++) {
      const open = await new Promise<boolean>((resolve) => {
        const socket = createConnection({ host: '127.0.0.1', port }, () => resolve(socket.end() && true)).on('error', () => resolve(false));
      });
      if (open) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('nats-server did not start');
  }

  beforeAll(async () => {
    port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    await startBroker();
  });

  afterAll(() => {
    broker?.kill('SIGKILL');
  });

  it('fails a request at once with service_unavailable (retry after a second) instead of waiting out its timeout', async () => {
    const client = new NatsCountryClient({ prefix: 'gone', servers: `nats://127.0.0.1:${port}`, timeoutMs: 120_000 });
    const lost = new Promise<void>((resolve) => client.on('disconnect', () => resolve()));
    try {
      await client.connect();
      broker!.kill('SIGKILL');
      await lost;
      const failure = await lastValueFrom(client.send('anything.at.all', {})).then(
        () => undefined,
        (error: unknown) => error as DomainError,
      );
      // With the old behaviour the request waited its 120 s timeout: this test's own limit ends it first.
      expect([failure?.code, failure?.extra]).toEqual(['service_unavailable', { retry_after: 1 }]);
    } finally {
      // Closed outright: a drain would wait for a broker that is not coming back, and reconnect for ever.
      await client.unwrap<NatsConnection>().close();
      await client.close().catch(() => undefined);
    }
  }, 20_000);
});
