import { createServer, Server } from 'node:http';
import type { Logger } from 'pino';

type Check = 'ok' | 'failed';

export interface HealthServerOptions {
  port: number;
  /** Listen address; probes come from the node's kubelet, so all interfaces by default. */
  host?: string;
  logger: Logger;
  /** Resolves when the service's database answers (`SELECT 1`). */
  database: () => Promise<unknown>;
  /** The transport's last status (`connected`, `disconnected`, `reconnecting`). */
  transport: () => string | undefined;
  /** How long a database check may take before it counts as failed. */
  timeoutMs?: number;
}

/**
 * The probes of a service that has no HTTP of its own (every service but the gateway), on
 * `HEALTH_PORT`: `GET /healthz` answers while the process's event loop turns (a liveness probe
 * restarts a process that stopped answering), `GET /readyz` is 200 only while the database answers
 * and the transport is connected (else 503), with `ok` or `failed` per check and the reason in the
 * log only, as the gateway's `/readyz`. Nothing else is served.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<Server> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const databaseCheck = async (): Promise<Check> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        options.database(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs))),
      ]);
      return 'ok';
    } catch (error) {
      options.logger.warn(`readiness check database failed: ${(error as Error)?.message ?? error}`);
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  };
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, { status: 'method_not_allowed' });
    if (path === '/healthz') return send(200, { status: 'ok' });
    if (path !== '/readyz') return send(404, { status: 'not_found' });
    void databaseCheck().then((database) => {
      const transport: Check = options.transport() === 'connected' ? 'ok' : 'failed';
      if (transport === 'failed') options.logger.warn(`readiness check transport failed: ${options.transport() ?? 'not started'}`);
      const ready = database === 'ok' && transport === 'ok';
      send(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks: { database, transport } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
