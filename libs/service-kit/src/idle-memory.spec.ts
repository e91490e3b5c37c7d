import { reclaimMemoryWhenIdle } from './idle-memory';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const busyFor = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe('reclaimMemoryWhenIdle', () => {
  const withGc = globalThis as { gc?: () => void };
  afterEach(() => delete withGc.gc);

  it('does nothing when collections cannot be asked for (no --expose-gc)', async () => {
    delete withGc.gc;
    const stop = reclaimMemoryWhenIdle(20);
    await sleep(80);
    stop();
  });

  it('collects once after start-up when quiet, not again while quiet, and again after a busy period', async () => {
    const gc = jest.fn();
    withGc.gc = gc;
    const stop = reclaimMemoryWhenIdle(50);
    try {
      await sleep(260);
      expect(gc).toHaveBeenCalledTimes(1);
      // A burst: the next period is busy (no collection), the one after is quiet again (one collection).
      busyFor(120);
      await sleep(30);
      busyFor(60);
      await sleep(220);
      expect(gc).toHaveBeenCalledTimes(2);
    } finally {
      stop();
    }
    await sleep(120);
    expect(gc).toHaveBeenCalledTimes(2);
  });
});
