import { DomainError } from '@dcr/domain';
import { BusDelivery, InProcessBus } from './in-process-bus';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('InProcessBus', () => {
  it('never delivers inside the publisher’s call stack', async () => {
    const bus = new InProcessBus();
    const received: string[] = [];
    bus.subscribe('us.a', 'us.svc', ({ body }) => received.push(body));

    bus.publish('us.a', '"one"');
    expect(received).toEqual([]);
    await nextTurn();
    expect(received).toEqual(['"one"']);
  });

  it('gives each queue group one copy, taking its members in turn', async () => {
    const bus = new InProcessBus();
    const received: string[] = [];
    bus.subscribe('us.a', 'us.alpha', ({ body }) => received.push(`alpha-1:${body}`));
    bus.subscribe('us.a', 'us.alpha', ({ body }) => received.push(`alpha-2:${body}`));
    bus.subscribe('us.a', 'us.beta', ({ body }) => received.push(`beta:${body}`));

    for (const body of ['1', '2', '3', '4']) bus.publish('us.a', body);
    await nextTurn();

    expect(received.filter((entry) => entry.startsWith('alpha')).sort()).toEqual([
      'alpha-1:1',
      'alpha-1:3',
      'alpha-2:2',
      'alpha-2:4',
    ]);
    expect(received.filter((entry) => entry.startsWith('beta'))).toEqual(['beta:1', 'beta:2', 'beta:3', 'beta:4']);
  });

  it('matches subjects exactly and drops what nobody hears', async () => {
    const bus = new InProcessBus();
    const received: string[] = [];
    bus.subscribe('us.a', 'us.svc', ({ subject }) => received.push(subject));

    bus.publish('de.a', '1');
    bus.publish('us.a.b', '1');
    bus.publish('us.a', '1');
    await nextTurn();
    expect(received).toEqual(['us.a']);
  });

  it('gives every subscriber its own copy of the headers', async () => {
    const bus = new InProcessBus();
    const seen: BusDelivery[] = [];
    bus.subscribe('us.a', 'us.one', (delivery) => {
      delivery.headers['x-changed'] = 'yes';
      seen.push(delivery);
    });
    bus.subscribe('us.a', 'us.two', (delivery) => seen.push(delivery));
    const headers = { 'x-request-id': 'r1' };

    bus.publish('us.a', '1', headers);
    await nextTurn();
    expect(headers).toEqual({ 'x-request-id': 'r1' });
    expect(seen.map((delivery) => delivery.headers['x-changed'])).toEqual(['yes', undefined]);
  });

  it('resolves a request with the first reply', async () => {
    const bus = new InProcessBus();
    bus.subscribe('us.q', 'us.svc', ({ body, reply }) => {
      reply?.(`${body}!`);
      reply?.('ignored');
    });
    await expect(bus.request('us.q', 'hi', {}, 1000)).resolves.toBe('hi!');
  });

  it('rejects a request nobody listens to with service_unavailable', async () => {
    const failure = await new InProcessBus().request('us.none', '{}', {}, 1000).catch((error: DomainError) => error);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('service_unavailable');
  });

  it('rejects a request without reply in time with upstream_timeout, and stops listening after unsubscribe', async () => {
    const bus = new InProcessBus();
    const unsubscribe = bus.subscribe('us.q', 'us.svc', () => undefined);
    const failure = await bus.request('us.q', '{}', {}, 20).catch((error: DomainError) => error);
    expect((failure as DomainError).code).toBe('upstream_timeout');

    unsubscribe();
    expect(bus.hasSubscribers('us.q')).toBe(false);
  });

  it('rejects a request with the abort reason when aborted', async () => {
    const bus = new InProcessBus();
    bus.subscribe('us.q', 'us.svc', () => undefined);
    const controller = new AbortController();
    const pending = bus.request('us.q', '{}', {}, 10_000, controller.signal);
    controller.abort(new DomainError('service_unavailable', 'closed'));
    await expect(pending).rejects.toMatchObject({ code: 'service_unavailable', message: 'closed' });
  });

  it('calls a request off with cancel: rejected with the reason, and a later reply is ignored', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const bus = new InProcessBus();
      let answer: ((body: string) => void) | undefined;
      bus.subscribe('us.q', 'us.svc', (delivery) => {
        answer = delivery.reply;
      });
      const pending = bus.call('us.q', '{}', {}, 10_000);
      pending.cancel(new DomainError('service_unavailable', 'closed'));
      await expect(pending.reply).rejects.toMatchObject({ code: 'service_unavailable', message: 'closed' });
      // Its timer was stopped with it: nothing is left to fire.
      expect(jest.getTimerCount()).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(answer).toBeDefined();
      answer?.('{"late":true}');
      await expect(pending.reply).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      jest.useRealTimers();
    }
  });
});
