import { createServer, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhooksSettings } from '../webhooks-settings';
import { HttpSender } from './http-sender';

/** The sender against receivers that misbehave, on loopback. */
describe('HttpSender', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  const routes = new Map<string, (response: ServerResponse) => void>();

  const settings = (localTargets: boolean) => ({ connectTimeoutMs: 2000, readTimeoutMs: 300, localTargets }) as unknown as WebhooksSettings;
  const senders: HttpSender[] = [];
  const send = (path: string, options: { environment?: string; localTargets?: boolean } = {}) => {
    const sender = new HttpSender(settings(options.localTargets ?? true));
    senders.push(sender);
    return sender.send({ url: `http://127.0.0.1:${port}${path}`, environment: options.environment ?? 'sandbox', headers: { 'content-type': 'application/json' }, body: '{}' });
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => routes.get(request.url ?? '')?.(response));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    routes.set('/nul', (response) => response.writeHead(200).end('ok\u0000tail'));
    routes.set('/nul-400', (response) => response.writeHead(400).end('bad\u0000'));
    routes.set('/stalled-200', (response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('partial');
    });
    routes.set('/cut-200', (response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('partial', () => response.socket?.destroy());
    });
    routes.set('/stalled-500', (response) => {
      response.writeHead(500, { 'content-length': '1000' });
      response.write('partial');
    });
    routes.set('/ok', (response) => response.writeHead(204).end());
  });

  afterAll(async () => {
    for (const sender of senders) sender.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps a NUL byte of the answer out of what it records (a text column refuses it, and the batch with it)', async () => {
    expect(await send('/nul')).toMatchObject({ outcome: { kind: 'success', status: 200 }, responseExcerpt: 'ok\uFFFDtail' });
    expect(await send('/nul-400')).toMatchObject({ outcome: { kind: 'http_error', status: 400 }, responseExcerpt: 'bad\uFFFD' });
  });

  it('counts a 2xx as delivered when its body then stalls or is cut off; a stalled 5xx is still a failure', async () => {
    expect(await send('/stalled-200')).toMatchObject({ outcome: { kind: 'success', status: 200 }, responseStatus: 200, responseExcerpt: 'partial', error: null });
    expect(await send('/cut-200')).toMatchObject({ outcome: { kind: 'success', status: 200 }, responseStatus: 200, error: null });
    expect(await send('/stalled-500')).toMatchObject({ outcome: { kind: 'timeout', phase: 'read' } });
  });

  it('reaches loopback for a sandbox application only where the service runs on the developer machine', async () => {
    expect(await send('/ok', { localTargets: true })).toMatchObject({ outcome: { kind: 'success', status: 204 } });
    const before = connections;
    // In a production deployment a literal private address is refused without a connection, sandbox or not.
    for (const environment of ['sandbox', 'production']) {
      expect(await send('/ok', { environment, localTargets: false })).toMatchObject({ outcome: { kind: 'network_error', code: 'EFORBIDDENADDRESS' }, responseStatus: null });
    }
    expect(await send('/ok', { environment: 'production', localTargets: true })).toMatchObject({ outcome: { kind: 'network_error', code: 'EFORBIDDENADDRESS' } });
    expect(connections).toBe(before);
  });
});
