import { firstValueFrom } from 'rxjs';
import { InProcessBus } from '../in-process/in-process-bus';
import { InProcessClient } from './in-process-client';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A bus whose `us.hold.<name>` requests wait until the test answers them, by the request's id. */
function holdingBus() {
  const bus = new InProcessBus();
  const waiting = new Map<string, (body: string) => void>();
  for (const name of ['a', 'b']) {
    bus.subscribe(`us.hold.${name}`, 'us.holder', ({ body, reply }) => {
      waiting.set((JSON.parse(body) as { data: { id: string } }).data.id, reply!);
    });
  }
  const answer = (id: string) => {
    waiting.get(id)!(JSON.stringify({ data: { answered: id } }));
    waiting.delete(id);
  };
  return { bus, waiting, answer };
}

/** What became of a request: its answer, or the error it failed with. */
function outcomeOf(client: InProcessClient, pattern: string, id: string): Promise<unknown> {
  return firstValueFrom(client.send(pattern, { id })).then(
    (reply) => reply,
    (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
  );
}

describe('InProcessClient', () => {
  it('closing fails every request still waiting, whichever were answered before and in what order', async () => {
    const { bus, waiting, answer } = holdingBus();
    const client = new InProcessClient({ prefix: 'us', bus });
    const outcomes = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id, i) => outcomeOf(client, i % 2 ? 'hold.b' : 'hold.a', id));
    await nextTurn();
    expect([...waiting.keys()].sort()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);

    // Out of the list's middle, its newest end and its oldest end.
    answer('r3');
    answer('r5');
    answer('r1');
    await nextTurn();
    client.close();

    expect(await Promise.all(outcomes)).toEqual([
      { answered: 'r1' },
      { code: 'service_unavailable', message: 'The client was closed before a reply on us.hold.b arrived' },
      { answered: 'r3' },
      { code: 'service_unavailable', message: 'The client was closed before a reply on us.hold.b arrived' },
      { answered: 'r5' },
    ]);
  });

  it('closing with nothing waiting fails nothing, and a request after that is answered as before', async () => {
    const { bus, answer } = holdingBus();
    const client = new InProcessClient({ prefix: 'us', bus });
    const first = outcomeOf(client, 'hold.a', 'first');
    await nextTurn();
    answer('first');
    expect(await first).toEqual({ answered: 'first' });
    client.close();

    const later = outcomeOf(client, 'hold.a', 'later');
    await nextTurn();
    answer('later');
    expect(await later).toEqual({ answered: 'later' });
  });

  it('an answer that comes after the close is not heard', async () => {
    const { bus, answer } = holdingBus();
    const client = new InProcessClient({ prefix: 'us', bus });
    const late = outcomeOf(client, 'hold.a', 'late');
    await nextTurn();
    client.close();
    answer('late');

    expect(await late).toEqual({ code: 'service_unavailable', message: 'The client was closed before a reply on us.hold.a arrived' });
  });
});
