import { randomBytes } from 'node:crypto';
import { INestMicroservice, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DomainError } from '@dcr/domain';
import { lastValueFrom, Observable } from 'rxjs';
import { CountryClient } from '../client/country-client';
import { useDomainRpcConventions } from '../nest/use-domain-rpc-conventions';
import { CountryServer } from '../server/country-server';
import { TransportRecord, withHeaders } from '../transport-record';
import {
  ContractEventController,
  ContractIdentity,
  ContractLog,
  ContractModule,
  ContractRequestController,
} from './contract-app';

/** How a spec file plugs one transport into the shared contract. */
export interface TransportUnderTest {
  createServer(options: { prefix: string; service: string }): CountryServer;
  createClient(options: { prefix: string; timeoutMs?: number }): CountryClient;
  /** Releases whatever the fixture itself opened; servers and clients are closed by the suite. */
  dispose?(): Promise<void>;
}

/** A prefix no other suite uses, so suites can share one NATS server and run in parallel. */
export const randomPrefix = () => `t${randomBytes(6).toString('hex')}`;

export async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('Condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function failureOf(reply: Observable<unknown>): Promise<DomainError> {
  try {
    await lastValueFrom(reply);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('Expected the request to fail, but it succeeded');
}

/**
 * The behaviour every transport must have, run against real Nest microservices: service "alpha"
 * runs as two replicas with request and event handlers, service "beta" as one with event handlers.
 */
export function describeTransportContract(name: string, makeTransport: () => TransportUnderTest): void {
  describe(`${name} transport contract`, () => {
    const prefix = randomPrefix();
    const otherPrefix = randomPrefix();
    const log = new ContractLog();
    /** The services' own logger: unexpected errors must be written there, under the service that had them. */
    const serviceErrors: string[] = [];
    const serviceLogger = {
      log: () => undefined,
      warn: () => undefined,
      error: (message: unknown, trace?: string) => void serviceErrors.push(`${String(message)} ${trace ?? ''}`),
    };
    const apps: INestMicroservice[] = [];
    const clients: CountryClient[] = [];
    let transport: TransportUnderTest;
    let client: CountryClient;

    async function startService(service: string, instance: string, controllers: Type[], servicePrefix = prefix) {
      const server = transport.createServer({ prefix: servicePrefix, service });
      const module = ContractModule.for(new ContractIdentity(service, instance), log, controllers);
      const app = await NestFactory.createMicroservice(module, { strategy: server, logger: false });
      apps.push(app);
      useDomainRpcConventions(app, serviceLogger);
      await app.listen();
    }

    function createClient(options: { prefix?: string; timeoutMs?: number } = {}): CountryClient {
      const created = transport.createClient({ prefix, ...options });
      clients.push(created);
      return created;
    }

    beforeAll(async () => {
      transport = makeTransport();
      await startService('alpha', 'alpha-1', [ContractRequestController, ContractEventController]);
      await startService('alpha', 'alpha-2', [ContractRequestController, ContractEventController]);
      await startService('beta', 'beta-1', [ContractEventController]);
      client = createClient();
      await client.connect();
    });

    afterAll(async () => {
      await Promise.all(clients.map((each) => each.close()));
      await Promise.all(apps.map((app) => app.close()));
      await transport?.dispose?.();
    });

    afterEach(() => jest.restoreAllMocks());

    it('answers a request with the reply of a handler on the prefixed subject', async () => {
      const sent = { text: 'hello', when: new Date(0) };
      const reply = await lastValueFrom(client.send('contract.echo', sent));

      expect(reply).toEqual({
        // JSON on the wire: the Date arrives as its ISO string, and the handler works on a copy.
        received: { text: 'hello', when: '1970-01-01T00:00:00.000Z', touchedByHandler: true },
        subject: `${prefix}.contract.echo`,
        instance: expect.stringMatching(/^alpha-[12]$/),
        requestId: null,
      });
      expect(sent).toEqual({ text: 'hello', when: new Date(0) });
    });

    it('connects a new client on its first request, and sends nothing until the reply is subscribed to', async () => {
      const fresh = createClient();
      const reply = fresh.send<string>('contract.count', { id: 'lazy-1' });
      await pause(50);
      expect(log.requests.map((entry) => entry.id)).not.toContain('lazy-1');

      await expect(lastValueFrom(reply)).resolves.toMatch(/^alpha-[12]$/);
      expect(log.requests.filter((entry) => entry.id === 'lazy-1')).toHaveLength(1);
    });

    it('answers null for a handler that returns nothing', async () => {
      await expect(lastValueFrom(client.send('contract.void', {}))).resolves.toBeNull();
    });

    it('answers the last value of a handler that returns a stream, once it completes', async () => {
      await expect(lastValueFrom(client.send('contract.stream', {}))).resolves.toBe('last');
    });

    it('answers the error of a handler whose stream fails, even after a value', async () => {
      const error = await failureOf(client.send('contract.stream_fails', {}));

      expect(error.code).toBe('conflict');
      expect(error.message).toBe('The stream failed after a value');
    });

    it('hands each request to exactly one replica of the service', async () => {
      const ids = Array.from({ length: 8 }, (_, index) => `request-${index}`);
      const instances = await Promise.all(ids.map((id) => lastValueFrom(client.send<string>('contract.count', { id }))));

      expect(instances.every((instance) => /^alpha-[12]$/.test(instance))).toBe(true);
      expect(log.requests.map((entry) => entry.id).filter((id) => id.startsWith('request-')).sort()).toEqual([...ids].sort());
    });

    it('carries a DomainError across with its code, message, details and extra', async () => {
      const error = await failureOf(client.send('contract.wrong_country', {}));

      expect(error.code).toBe('wrong_country');
      expect(error.status).toBe(421);
      expect(error.message).toBe('This resource is served from its home country DE');
      expect(error.details).toEqual([{ field: 'subject', reason: 'recorded in another country' }]);
      expect(error.extra).toEqual({ home_country: 'DE' });
    });

    it('turns any other error into internal_error without leaking it, and logs it where it happened', async () => {
      const error = await failureOf(client.send('contract.crash', {}));

      expect(error.code).toBe('internal_error');
      expect(JSON.stringify({ ...error.toJSON(), stack: undefined })).not.toMatch(/hunter2|secret|postgres/);
      expect(serviceErrors.join(' ')).toContain('hunter2');
    });

    it('refuses a payload that fails its DTO with validation_failed naming each field', async () => {
      const error = await failureOf(
        client.send('contract.register', { name: 'x', address: { street: '' }, unexpected: true }),
      );

      expect(error.code).toBe('validation_failed');
      expect(error.message).toBe('The message did not pass validation');
      const fields = error.details?.map((issue) => issue.field).sort();
      expect(fields).toEqual(['address.street', 'name', 'unexpected']);
      expect(error.details?.find((issue) => issue.field === 'name')?.reason).toMatch(/name must be longer/);
    });

    it('gives a valid payload to the handler as a DTO instance', async () => {
      const reply = await lastValueFrom(client.send('contract.register', { name: 'Ada', address: { street: 'Main' } }));
      expect(reply).toEqual({ isDto: true, isNestedDto: true, name: 'Ada' });
    });

    it("refuses a request or an event over the bus's largest message (NATS's default max_payload) with payload_too_large naming the subject", async () => {
      const blob = 'x'.repeat(1024 * 1024 + 1);
      const request = await failureOf(client.send('contract.echo', { blob }));
      expect(request.code).toBe('payload_too_large');
      expect(request.message).toContain(`${prefix}.contract.echo`);
      const event = await failureOf(client.emit('contract.happened', { id: 'too-large', blob }));
      expect(event.code).toBe('payload_too_large');
      // Just under it goes through.
      const fits = await lastValueFrom(client.send<{ received: { blob: string } }>('contract.echo', { blob: 'x'.repeat(1000 * 1000) }));
      expect(fits.received.blob).toHaveLength(1000 * 1000);
    });

    it("answers internal_error for a reply over the bus's largest message instead of leaving the caller to time out", async () => {
      const error = await failureOf(client.send('contract.inflate', { bytes: 1024 * 1024 + 1 }));
      expect(error.code).toBe('internal_error');
      expect(await lastValueFrom(client.send<string>('contract.inflate', { bytes: 1000 }))).toHaveLength(1000);
    });

    it('fails with service_unavailable naming the subject when nobody listens', async () => {
      const error = await failureOf(client.send('contract.nobody_home', {}));

      expect(error.code).toBe('service_unavailable');
      expect(error.message).toContain(`${prefix}.contract.nobody_home`);
    });

    it('fails with upstream_timeout when the reply takes longer than the client waits', async () => {
      const impatient = createClient({ timeoutMs: 100 });
      const error = await failureOf(impatient.send('contract.slow', { id: 'slow-1' }));

      // The client gave up before the handler (300 ms) finished: an ordering, not a stopwatch,
      // so a loaded CI machine cannot fail it.
      expect(error.code).toBe('upstream_timeout');
      expect(log.finishedSlowRequests).not.toContain('slow-1');
      await waitFor(() => log.finishedSlowRequests.includes('slow-1'));
    });

    it('lets one message override the timeout of its client', async () => {
      const error = await failureOf(client.send('contract.slow', new TransportRecord({ id: 'slow-2' }, { timeoutMs: 50 })));

      expect(error.code).toBe('upstream_timeout');
      await waitFor(() => log.finishedSlowRequests.includes('slow-2'));
    });

    it('fails requests still waiting for a reply when their client closes', async () => {
      const closing = createClient();
      const pending = failureOf(closing.send('contract.slow', { id: 'slow-3' }));
      await pause(50);
      await closing.close();
      const error = await pending;

      expect(error.code).toBe('service_unavailable');
      expect(error.message).toContain(`${prefix}.contract.slow`);
      await waitFor(() => log.finishedSlowRequests.includes('slow-3'));
    });

    it('answers the requests in hand when a service closes (a rolling update), and takes no new ones', async () => {
      const closingPrefix = randomPrefix();
      await startService('alpha', 'closing-1', [ContractRequestController], closingPrefix);
      const closingApp = apps[apps.length - 1];
      const caller = createClient({ prefix: closingPrefix });
      const inHand = lastValueFrom(caller.send<string>('contract.slow', { id: 'in-hand-1' }));
      await waitFor(() => log.startedSlowRequests.includes('in-hand-1'));
      await closingApp.close();
      // The handler ran to its end and its reply went out before the connection closed.
      await expect(inHand).resolves.toBe('late');
      const after = await failureOf(caller.send('contract.slow', { id: 'after-close' }));
      expect(after.code).toBe('service_unavailable');
    });

    it('delivers an event once to each service, to one of its replicas', async () => {
      const ids = Array.from({ length: 6 }, (_, index) => `event-${index}`);
      for (const id of ids) await lastValueFrom(client.emit('contract.happened', { id }));

      await waitFor(() => log.eventIds('alpha').length >= ids.length && log.eventIds('beta').length >= ids.length);
      await pause(100); // a duplicate would arrive in this window
      expect(log.eventIds('alpha')).toEqual(ids);
      expect(log.eventIds('beta')).toEqual(ids);
      const alphaInstances = log.events.filter((entry) => entry.service === 'alpha').map((entry) => entry.instance);
      expect(alphaInstances.every((instance) => /^alpha-[12]$/.test(instance))).toBe(true);
    });

    it('drops an event nobody subscribes to, and survives an event handler that throws', async () => {
      await expect(lastValueFrom(client.emit('contract.unheard', { id: 'x' }))).resolves.toBeUndefined();
      await lastValueFrom(client.emit('contract.explodes', {}));
      await lastValueFrom(client.emit('contract.happened', { id: 'after-failure' }));

      await waitFor(() => log.events.filter((entry) => entry.id === 'after-failure').length === 2);
      await expect(lastValueFrom(client.send('contract.void', {}))).resolves.toBeNull();
    });

    it('keeps countries apart: a prefix never reaches the services of another', async () => {
      const foreign = createClient({ prefix: otherPrefix });

      const error = await failureOf(foreign.send('contract.echo', {}));
      expect(error.code).toBe('service_unavailable');

      await lastValueFrom(foreign.emit('contract.happened', { id: 'foreign-event' }));
      await startService('alpha', 'foreign-alpha', [ContractRequestController], otherPrefix);
      const foreignReplies = await Promise.all([1, 2, 3].map(() => lastValueFrom(foreign.send('contract.echo', {}))));
      const homeReplies = await Promise.all([1, 2, 3, 4, 5, 6].map(() => lastValueFrom(client.send('contract.echo', {}))));

      expect(foreignReplies.map((reply) => reply.instance)).toEqual(['foreign-alpha', 'foreign-alpha', 'foreign-alpha']);
      expect(homeReplies.every((reply) => /^alpha-[12]$/.test(reply.instance))).toBe(true);
      await pause(50);
      expect(log.events.some((entry) => entry.id === 'foreign-event')).toBe(false);
    });

    it('carries headers with requests and events', async () => {
      const reply = await lastValueFrom(client.send('contract.echo', withHeaders({}, { 'X-Request-Id': 'req-42' })));
      expect(reply.requestId).toBe('req-42');
      expect(reply.received).toEqual({ touchedByHandler: true });

      const hooked = createClient();
      hooked.setOnDispatchHook((packet) => {
        packet.metadata = { 'x-request-id': 'from-hook' };
      });
      await expect(lastValueFrom(hooked.send('contract.echo', {}))).resolves.toMatchObject({ requestId: 'from-hook' });

      await lastValueFrom(client.emit('contract.happened', withHeaders({ id: 'with-header' }, { 'x-request-id': 'req-43' })));
      await waitFor(() => log.events.filter((entry) => entry.id === 'with-header').length === 2);
      expect(log.events.filter((entry) => entry.id === 'with-header').map((entry) => entry.requestId)).toEqual([
        'req-43',
        'req-43',
      ]);
    });
  });
}
