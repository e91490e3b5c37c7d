import { reclaimMemoryWhenIdle } from './idle-memory';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const busyFor = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};
const MiB = 1024 * 1024;

describe('reclaimMemoryWhenIdle', () => {
  it('does nothing when collections cannot be asked for (no --expose-gc)', async () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const stop = reclaimMemoryWhenIdle({ checkEveryMs: 10 });
    await sleep(50);
    stop();
  });

  it('after start-up, collects each quiet period until the heap shrinks, at most eight times', async () => {
    const collect = jest.fn();
    const stop = reclaimMemoryWhenIdle({ checkEveryMs: 15, collect, heap: () => ({ heapUsed: 10 * MiB, heapTotal: 60 * MiB }) });
    try {
      await sleep(400);
      expect(collect).toHaveBeenCalledTimes(8);
    } finally {
      stop();
    }
  });

  it('stops once the heap shrank, collects again after 4 MiB of growth, and after a busy period', async () => {
    const heap = { heapUsed: 10 * MiB, heapTotal: 60 * MiB };
    const collect = jest.fn(() => {
      heap.heapTotal = 30 * MiB;
    });
    const stop = reclaimMemoryWhenIdle({ checkEveryMs: 30, collect, heap: () => ({ ...heap }) });
    try {
      await sleep(200);
      expect(collect).toHaveBeenCalledTimes(1);
      heap.heapUsed += 5 * MiB; // a quiet poller's garbage
      await sleep(120);
      expect(collect).toHaveBeenCalledTimes(2);
      // A burst: its period is busy (no collection); the quiet one after collects.
      heap.heapTotal = 60 * MiB;
      busyFor(80);
      await sleep(20);
      busyFor(40);
      await sleep(150);
      expect(collect).toHaveBeenCalledTimes(3);
    } finally {
      stop();
    }
    await sleep(100);
    expect(collect).toHaveBeenCalledTimes(3);
  });
});
