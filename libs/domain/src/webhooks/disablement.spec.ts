import fc from 'fast-check';
import { WEBHOOK_DISABLE_AFTER, afterDeliveryEnded } from './disablement';

type Ended = { ended: 'succeeded' | 'failed'; test: boolean };
const delivery: fc.Arbitrary<Ended> = fc.record({
  ended: fc.constantFrom<'succeeded' | 'failed'>('succeeded', 'failed'),
  test: fc.boolean(),
});

describe('afterDeliveryEnded', () => {
  it('disables on the fifth consecutive failed delivery, not before', () => {
    let counter = 0;
    const disables: boolean[] = [];
    for (let i = 0; i < WEBHOOK_DISABLE_AFTER; i++) {
      const next = afterDeliveryEnded(counter, 'failed', false);
      counter = next.counter;
      disables.push(next.disable);
    }
    expect(WEBHOOK_DISABLE_AFTER).toBe(5);
    expect(disables).toEqual([false, false, false, false, true]);
    expect(counter).toBe(5);
  });

  it('resets the counter on success', () => {
    expect(afterDeliveryEnded(4, 'succeeded', false)).toEqual({ counter: 0, disable: false });
  });

  it('leaves the counter alone for test deliveries and never disables for them', () => {
    expect(afterDeliveryEnded(4, 'failed', true)).toEqual({ counter: 4, disable: false });
    expect(afterDeliveryEnded(4, 'succeeded', true)).toEqual({ counter: 4, disable: false });
  });

  it('counts exactly the real failed deliveries since the last real success', () => {
    fc.assert(
      fc.property(fc.array(delivery, { maxLength: 40 }), (deliveries) => {
        let counter = 0;
        let disabledAt: number | undefined;
        deliveries.forEach((d, i) => {
          const next = afterDeliveryEnded(counter, d.ended, d.test);
          counter = next.counter;
          if (next.disable && disabledAt === undefined) disabledAt = i;
        });
        const real = deliveries.filter((d) => !d.test);
        const lastSuccess = real.map((d) => d.ended).lastIndexOf('succeeded');
        expect(counter).toBe(real.length - lastSuccess - 1);
        // The first disablement happens at the first run of five real failures, tests in between ignored.
        let run = 0;
        let expected: number | undefined;
        deliveries.forEach((d, i) => {
          if (d.test || expected !== undefined) return;
          run = d.ended === 'failed' ? run + 1 : 0;
          if (run === WEBHOOK_DISABLE_AFTER) expected = i;
        });
        expect(disabledAt).toBe(expected);
      }),
    );
  });

  it.each([-1, 1.5, Number.NaN])('refuses the counter %p', (counter) => {
    expect(() => afterDeliveryEnded(counter, 'failed', false)).toThrow(RangeError);
  });
});
