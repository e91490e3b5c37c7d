import { MEMORY_NODE_FLAGS, reclaimMemoryWhenIdle } from './idle-memory';

const MiB = 1024 * 1024;

/** A process whose busy share per check period and heap the test sets; timers are fake. */
function simulated(heapTotal: number, shrinkTo?: number) {
  const state = { busy: 0, heapUsed: 10 * MiB, heapTotal };
  const collect = jest.fn(() => {
    if (shrinkTo !== undefined) state.heapTotal = Math.min(state.heapTotal, shrinkTo);
  });
  const stop = reclaimMemoryWhenIdle({
    checkEveryMs: 1000,
    collect,
    heap: () => ({ heapUsed: state.heapUsed, heapTotal: state.heapTotal }),
    busyShare: () => state.busy,
    nodeFlags: MEMORY_NODE_FLAGS,
  });
  const periods = (n: number) => jest.advanceTimersByTime(n * 1000);
  return { state, collect, stop, periods };
}

describe('reclaimMemoryWhenIdle', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('does nothing when collections cannot be asked for (no --expose-gc)', () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const stop = reclaimMemoryWhenIdle({ checkEveryMs: 1000, nodeFlags: MEMORY_NODE_FLAGS });
    expect(jest.getTimerCount()).toBe(0);
    stop();
  });

  it("does nothing when the process keeps its maps for V8's default two collections only", () => {
    const collect = jest.fn();
    const heap = () => ({ heapUsed: 10 * MiB, heapTotal: 60 * MiB });
    const stop = reclaimMemoryWhenIdle({ checkEveryMs: 1000, collect, heap, busyShare: () => 0, nodeFlags: ['--expose-gc', '--max-semi-space-size=64'] });
    jest.advanceTimersByTime(10_000);
    expect(collect).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
    stop();
    // The flag in either spelling V8 takes.
    const stopAgain = reclaimMemoryWhenIdle({ checkEveryMs: 1000, collect, heap, busyShare: () => 0, nodeFlags: ['--expose-gc', '--retain_maps_for_n_gc=64'] });
    jest.advanceTimersByTime(1000);
    expect(collect).toHaveBeenCalledTimes(1);
    stopAgain();
  });

  it('never collects while busy; after start-up, collects each quiet period until the heap shrinks, at most eight times', () => {
    const { state, collect, stop, periods } = simulated(60 * MiB);
    state.busy = 0.5;
    periods(5);
    expect(collect).not.toHaveBeenCalled();
    state.busy = 0.01;
    periods(20);
    expect(collect).toHaveBeenCalledTimes(8);
    stop();
  });

  it('stops once the heap shrank, collects again after 4 MiB of growth, and once after a busy period when already compact', () => {
    const { state, collect, stop, periods } = simulated(60 * MiB, 30 * MiB);
    periods(5);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(state.heapTotal).toBe(30 * MiB);
    state.heapUsed += 5 * MiB; // a quiet poller's garbage
    periods(3);
    expect(collect).toHaveBeenCalledTimes(2);
    state.busy = 0.9; // a burst
    periods(2);
    state.busy = 0;
    periods(5);
    expect(collect).toHaveBeenCalledTimes(3);
    stop();
    periods(5);
    expect(collect).toHaveBeenCalledTimes(3);
  });
});
