import { CallBatcher } from './call-batcher';

/** A batch function whose batches the test finishes by hand. */
function controlledRun() {
  const batches: Array<{ inputs: number[]; finish: (outputs: string[]) => void; fail: (error: Error) => void }> = [];
  const run = (inputs: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ inputs, finish: resolve, fail: reject });
    });
  return { batches, run };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CallBatcher', () => {
  it('starts a lone call at once, and sends the calls that arrive meanwhile together', async () => {
    const { batches, run } = controlledRun();
    const batcher = new CallBatcher(run, { maxBatch: 10, maxConcurrent: 1 });

    const first = batcher.call(1);
    expect(batches.map((batch) => batch.inputs)).toEqual([[1]]);
    const later = [batcher.call(2), batcher.call(3), batcher.call(4)];
    expect(batches).toHaveLength(1);
    expect(batcher.queued).toBe(3);

    batches[0].finish(['one']);
    await expect(first).resolves.toBe('one');
    await settle();
    expect(batches.map((batch) => batch.inputs)).toEqual([[1], [2, 3, 4]]);
    batches[1].finish(['two', 'three', 'four']);
    await expect(Promise.all(later)).resolves.toEqual(['two', 'three', 'four']);
  });

  it('runs up to maxConcurrent batches at a time, each of at most maxBatch calls', async () => {
    const { batches, run } = controlledRun();
    const batcher = new CallBatcher(run, { maxBatch: 2, maxConcurrent: 2 });

    const calls = [1, 2, 3, 4, 5, 6, 7].map((n) => batcher.call(n));
    expect(batches.map((batch) => batch.inputs)).toEqual([[1], [2]]);
    batches[0].finish(['a']);
    await settle();
    expect(batches.map((batch) => batch.inputs)).toEqual([[1], [2], [3, 4]]);
    batches[1].finish(['b']);
    await settle();
    expect(batches.map((batch) => batch.inputs)).toEqual([[1], [2], [3, 4], [5, 6]]);
    batches[2].finish(['c', 'd']);
    batches[3].finish(['e', 'f']);
    await settle();
    expect(batches[4].inputs).toEqual([7]);
    batches[4].finish(['g']);
    await expect(Promise.all(calls)).resolves.toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(batcher.queued).toBe(0);
  });

  it('fails every call of a failed batch, and goes on with the next', async () => {
    const { batches, run } = controlledRun();
    const batcher = new CallBatcher(run, { maxBatch: 10, maxConcurrent: 1 });

    const first = batcher.call(1);
    const second = [batcher.call(2), batcher.call(3)];
    batches[0].fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    batches[1].finish(['x', 'y']);
    await expect(Promise.all(second)).resolves.toEqual(['x', 'y']);
  });

  it('fails a batch whose outputs do not match its inputs, or whose run throws', async () => {
    const short = new CallBatcher(async (inputs: number[]) => inputs.slice(1).map(String), { maxBatch: 10, maxConcurrent: 1 });
    await expect(short.call(1)).rejects.toThrow('A batch of 1 calls answered 0 outputs');

    const throwing = new CallBatcher<number, string>(
      () => {
        throw new Error('bad statement');
      },
      { maxBatch: 10, maxConcurrent: 1 },
    );
    await expect(throwing.call(1)).rejects.toThrow('bad statement');
    await expect(throwing.call(2)).rejects.toThrow('bad statement');
  });

  it('refuses limits below one', () => {
    expect(() => new CallBatcher(async () => [], { maxBatch: 0, maxConcurrent: 1 })).toThrow('at least 1');
  });
});
