import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AttemptOutcome, FORBIDDEN_ADDRESS_ERROR, isForbiddenDeliveryAddress } from '@dcr/domain';
import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
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
      const refused = Object.assign(new Error(`${hostname} resolves to a private or loopback address`), { code: FORBIDDEN_ADDRESS_ERROR });
      return callback(refused, '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/** What a database text column can hold of the receiver's bytes: PostgreSQL's text takes no NUL. */
const storable = (text: string) => text.replace(/\u0000/g, '\uFFFD');

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
    // Only a sandbox application, and only where the service runs on the developer's machine, may reach private addresses.
    const publicOnly = target.environment === 'production' || !this.settings.localTargets;
    const agents = this.agents[publicOnly ? 'production' : 'sandbox'];
    const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (publicOnly && isIP(literal) !== 0 && isForbiddenDeliveryAddress(literal)) {
      // A literal address is never looked up, so the agents' check would not see it.
      return Promise.resolve({ outcome: { kind: 'network_error', code: FORBIDDEN_ADDRESS_ERROR }, startedAt, durationMs: 0, responseStatus: null, responseExcerpt: null, error: 'the address is private or loopback' });
    }
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      let readTimer: NodeJS.Timeout | undefined;
      const finish = (outcome: AttemptOutcome, responseStatus: number | null, excerpt: string | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(readTimer);
        resolve({
          outcome,
          startedAt,
          durationMs: Math.round(performance.now() - started),
          responseStatus,
          responseExcerpt: excerpt === null ? null : storable(excerpt),
          error: error === null ? null : storable(error),
        });
      };
      /** A 2xx whose status line arrived is a delivery, whatever happens to its body afterwards. */
      let accepted: { status: number; excerpt: () => string } | undefined;
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        headers: { ...target.headers, 'content-length': Buffer.byteLength(target.body) },
        agent: secure ? agents.https : agents.http,
      });
      const timeOut = (phase: 'connect' | 'read') => {
        if (accepted) finish({ kind: 'success', status: accepted.status }, accepted.status, accepted.excerpt(), null);
        else finish({ kind: 'timeout', phase }, null, null, `${phase} timeout`);
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
        const excerpt = () => Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) accepted = { status, excerpt };
        const done = () => {
          const outcome: AttemptOutcome = accepted ? { kind: 'success', status } : { kind: 'http_error', status };
          finish(outcome, status, excerpt(), null);
        };
        response.on('end', done);
        response.on('close', done);
        response.on('error', (error: NodeJS.ErrnoException) => failed(error, 'ERESPONSE'));
      });
      const failed = (error: NodeJS.ErrnoException, code: string) => {
        if (accepted) finish({ kind: 'success', status: accepted.status }, accepted.status, accepted.excerpt(), null);
        else finish({ kind: 'network_error', code: error.code ?? code }, null, null, error.message);
      };
      request.on('error', (error: NodeJS.ErrnoException) => failed(error, 'EREQUEST'));
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
