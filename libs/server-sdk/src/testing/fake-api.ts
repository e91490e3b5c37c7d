import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

/**
 * What the fake answers: a status with a JSON (or raw) body and headers; `hang` (never answers);
 * `hang-body` (sends the status and headers, then never finishes the body); `destroy` (drops the
 * connection without an answer).
 */
export type FakeReply =
  | { status: number; body?: unknown; raw?: string; headers?: Record<string, string> }
  | 'hang'
  | 'hang-body'
  | 'destroy';

/** A local HTTP server standing in for the gateway: it records every request and answers from a script. */
export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  url = '';
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private script: FakeReply[] = [];
  private fallback: FakeReply = { status: 200, body: {} };

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const url = new URL(request.url ?? '/', 'http://fake');
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = body ? JSON.parse(body) : undefined;
        } catch {
          json = undefined;
        }
        this.requests.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams, headers: request.headers, body, json });
        this.answer(this.script.shift() ?? this.fallback, response);
      });
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The next answers, in order; after them every request gets `fallback`. */
  replies(...replies: FakeReply[]): this {
    this.script = replies;
    return this;
  }

  always(reply: FakeReply): this {
    this.script = [];
    this.fallback = reply;
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.script = [];
    this.fallback = { status: 200, body: {} };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private answer(reply: FakeReply, response: ServerResponse): void {
    if (reply === 'hang') return;
    if (reply === 'destroy') {
      response.socket?.destroy();
      return;
    }
    if (reply === 'hang-body') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"partial":');
      return;
    }
    const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
    const headers: Record<string, string> = { 'x-request-id': `req_fake_${this.requests.length}`, ...reply.headers };
    if (reply.raw === undefined && reply.body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
    response.writeHead(reply.status, headers);
    response.end(text);
  }
}
