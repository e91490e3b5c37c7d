import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AttemptOutcome, isForbiddenDeliveryAddress } from '@dcr/domain';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { WebhooksSettings } from '../webhooks-settings';

export interface SendResult {
  outcome: AttemptOutcome;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
}

const EXCERPT_BYTES = 1024;
/** Responses are read to their end to keep the connection reusable, but never more than this. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Resolves like dns.lookup, but refuses a name that resolves to an address a production delivery
 * must never reach, so a DNS answer that changed after the subscription was checked (rebinding)
 * cannot point a delivery at the internal network.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    if (addresses.length === 0 || addresses.some((entry) => isForbiddenDeliveryAddress(entry.address))) {
      const refused = Object.assign(new Error(`${hostname} resolves to a private or loopback address`), { code: 'EFORBIDDENADDRESS' });
      return callback(refused, '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/**
 * POSTs one signed delivery with the specification's timeouts: 10 s to connect, 15 s to read the
 * answer. Connections are kept alive per host, so a busy receiver is not re-dialled per delivery.
 */
@Injectable()
export class HttpSender implements OnApplicationShutdown {
  private readonly agents: Record<'sandbox' | 'production', { http: http.Agent; https: https.Agent }>;

  constructor(private readonly settings: WebhooksSettings) {
    const common = { keepAlive: true, maxSockets: 256, scheduling: 'lifo' as const };
    this.agents = {
      sandbox: { http: new http.Agent(common), https: new https.Agent(common) },
      production: { http: new http.Agent({ ...common, lookup: publicOnlyLookup }), https: new https.Agent({ ...common, lookup: publicOnlyLookup }) },
    };
  }

  send(target: { url: string; environment: string; headers: Record<string, string>; body: string }): Promise<SendResult> {
    const startedAt = new Date();
    const started = performance.now();
    const url = new URL(target.url);
    const secure = url.protocol === 'https:';
    const agents = this.agents[target.environment === 'production' ? 'production' : 'sandbox'];
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      let readTimer: NodeJS.Timeout | undefined;
      const finish = (outcome: AttemptOutcome, responseStatus: number | null, excerpt: string | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(readTimer);
        resolve({ outcome, startedAt, durationMs: Math.round(performance.now() - started), responseStatus, responseExcerpt: excerpt, error });
      };
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        headers: { ...target.headers, 'content-length': Buffer.byteLength(target.body) },
        agent: secure ? agents.https : agents.http,
      });
      const timeOut = (phase: 'connect' | 'read') => {
        finish({ kind: 'timeout', phase }, null, null, `${phase} timeout`);
        request.destroy();
      };
      const startReading = () => {
        readTimer = setTimeout(() => timeOut('read'), this.settings.readTimeoutMs);
      };
      request.on('socket', (socket) => {
        if (socket.connecting || (secure && !(socket as import('node:tls').TLSSocket).encrypted)) {
          connectTimer = setTimeout(() => timeOut('connect'), this.settings.connectTimeoutMs);
          socket.once(secure ? 'secureConnect' : 'connect', () => {
            clearTimeout(connectTimer);
            startReading();
          });
        } else {
          startReading();
        }
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
          else response.destroy();
        });
        const done = () => {
          const status = response.statusCode ?? 0;
          const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
          const outcome: AttemptOutcome = status >= 200 && status < 300 ? { kind: 'success', status } : { kind: 'http_error', status };
          finish(outcome, status, excerpt, null);
        };
        response.on('end', done);
        response.on('close', done);
        response.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'network_error', code: error.code ?? 'ERESPONSE' }, null, null, error.message));
      });
      request.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'network_error', code: error.code ?? 'EREQUEST' }, null, null, error.message));
      request.end(target.body);
    });
  }

  onApplicationShutdown(): void {
    for (const pair of Object.values(this.agents)) {
      pair.http.destroy();
      pair.https.destroy();
    }
  }
}
