import Fastify from 'fastify';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { ConfigError, GatewayEnvironment, loadConfig } from '@dcr/config';
import { trustedProxies } from './trusted-proxies';

/** A gateway environment that loads (development: no production keys needed). */
const valid = { NODE_ENV: 'development', COUNTRY: 'us', REGION: 'dev', DATABASE_URL: 'postgres://127.0.0.1/dcr', TRANSPORT: 'inprocess', SUBJECT_REF_KEY: 'k'.repeat(32) };

/**
 * What the gateway's Fastify, configured with `TRUST_PROXY`, takes for the client of one request
 * arriving from `remoteAddress` (a request handed to Fastify's router as the HTTP server would).
 */
async function clientSeen(env: Record<string, string>, remoteAddress: string, headers: Record<string, string>) {
  const app = Fastify({ trustProxy: trustedProxies(loadConfig(GatewayEnvironment, { ...valid, ...env })) });
  const seen = new Promise<{ ip: string; protocol: string; host: string }>((resolve) => {
    app.get('/', (request, reply) => {
      resolve({ ip: request.ip, protocol: request.protocol, host: request.host });
      return reply.send('ok');
    });
  });
  await app.ready();
  try {
    const socket = new Socket();
    Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress });
    const request = new IncomingMessage(socket);
    Object.assign(request, { method: 'GET', url: '/', headers: { host: 'gateway.internal', ...headers } });
    request.push(null);
    app.routing(request, new ServerResponse(request));
    return await seen;
  } finally {
    await app.close();
  }
}

describe('TRUST_PROXY', () => {
  // The hook route's per-address limit (and anything else keyed by request.ip) must not be a
  // header any client can write: X-Forwarded-For from a peer on the internet is not believed.
  it('by default ignores forwarding headers a client on the internet sends', async () => {
    const seen = await clientSeen({}, '203.0.113.7', { 'x-forwarded-for': '198.51.100.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    expect(seen).toEqual({ ip: '203.0.113.7', protocol: 'http', host: 'gateway.internal' });
  });

  it('by default believes a proxy on a private or loopback address (an ingress in the cluster), up to the first address it did not add', async () => {
    const viaIngress = await clientSeen({}, '10.0.3.4', { 'x-forwarded-for': '198.51.100.9, 203.0.113.7', 'x-forwarded-proto': 'https' });
    expect(viaIngress.ip).toBe('203.0.113.7');
    expect(viaIngress.protocol).toBe('https');
    expect((await clientSeen({}, '127.0.0.1', { 'x-forwarded-for': '203.0.113.8' })).ip).toBe('203.0.113.8');
  });

  it('false believes no proxy; a list names the proxies; true believes every peer', async () => {
    expect((await clientSeen({ TRUST_PROXY: 'false' }, '10.0.3.4', { 'x-forwarded-for': '203.0.113.7' })).ip).toBe('10.0.3.4');
    expect((await clientSeen({ TRUST_PROXY: '192.0.2.10, 192.0.2.0/30' }, '192.0.2.10', { 'x-forwarded-for': '203.0.113.7' })).ip).toBe('203.0.113.7');
    expect((await clientSeen({ TRUST_PROXY: '192.0.2.10' }, '10.0.3.4', { 'x-forwarded-for': '203.0.113.7' })).ip).toBe('10.0.3.4');
    expect((await clientSeen({ TRUST_PROXY: 'true' }, '203.0.113.50', { 'x-forwarded-for': '198.51.100.1' })).ip).toBe('198.51.100.1');
  });

  it.each(['yes', '10.0.0.0/8; rm', 'loopback,,', '-1', '2'])('refuses %p at boot, naming TRUST_PROXY', (value) => {
    expect(() => loadConfig(GatewayEnvironment, { ...valid, TRUST_PROXY: value })).toThrow(ConfigError);
    try {
      loadConfig(GatewayEnvironment, { ...valid, TRUST_PROXY: value });
    } catch (error) {
      expect((error as ConfigError).variables).toEqual(['TRUST_PROXY']);
    }
  });
});
