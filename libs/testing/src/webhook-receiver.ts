import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on loopback, for webhook tests. Each path answers by a rule: `/ok` 200,
 * `/reject` 400, `/down` 503, `/flaky-<n>` 503 for the first n requests then 200, `/hang` never (until
 * closed), `/hang-once` never the first time and 200 afterwards.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly server: Server;
  private readonly hits = new Map<string, number>();
  url = '';

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const hit = (this.hits.get(path) ?? 0) + 1;
        this.hits.set(path, hit);
        const flaky = /^\/flaky-(\d+)/.exec(path);
        let status = 200;
        if (path.startsWith('/reject')) status = 400;
        else if (path.startsWith('/down')) status = 503;
        else if (flaky) status = hit <= Number(flaky[1]) ? 503 : 200;
        else if (path.startsWith('/hang-once')) {
          if (hit === 1) return;
        } else if (path.startsWith('/hang')) return;
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(status === 200 ? 'thanks' : `no (${status})`);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((item) => item.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
