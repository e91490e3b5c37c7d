import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { NatsCountryClient } from './nats-country-client';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * A NATS server of its own with a smaller max_payload than the default: the service's parts are
 * sized for 1 MiB, so a client connecting to it says so at once instead of failing requests later.
 */
describe('NatsCountryClient and the server it connects to', () => {
  let server: ChildProcess;
  let folder: string;
  let url: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'nats-small-'));
    const port = await freePort();
    writeFileSync(join(folder, 'nats.conf'), `listen: 127.0.0.1:${port}\nmax_payload: 524288\n`);
    server = spawn(NATS_SERVER, ['-c', join(folder, 'nats.conf')], { stdio: 'ignore' });
    url = `nats://127.0.0.1:${port}`;
  });

  afterAll(() => {
    server?.kill();
    rmSync(folder, { recursive: true, force: true });
  });

  it('warns when the server takes smaller messages than the 1 MiB the service sends', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const client = new NatsCountryClient({ prefix: 'us', servers: url });
    try {
      for (let tries = 0; ; tries++) {
        try {
          await client.connect();
          break;
        } catch (error) {
          if (tries > 50) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('the NATS server takes messages of at most 524288 bytes; this service needs 1048576'));
    } finally {
      await client.close();
      warn.mockRestore();
    }
  });
});
