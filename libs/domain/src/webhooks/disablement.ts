/** Consecutive failed deliveries after which a subscription is disabled (specification, Limits). */
export const WEBHOOK_DISABLE_AFTER = 5;

/**
 * The subscription's consecutive-failure counter after a delivery has ended (all its attempts
 * done): a success resets it to 0, a failed delivery adds 1, and a test delivery leaves it as it was,
 * because tests from the panel must never disable a subscription nor hide real failures. `disable`
 * is true once the counter reaches WEBHOOK_DISABLE_AFTER; enabling the subscription again should set
 * the counter back to 0, or the next failure disables it at once.
 */
export function afterDeliveryEnded(
  counter: number,
  ended: 'succeeded' | 'failed',
  test: boolean,
): { counter: number; disable: boolean } {
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new RangeError(`failure counter must be a whole number from 0, got ${String(counter)}`);
  }
  if (ended !== 'succeeded' && ended !== 'failed') throw new RangeError(`unknown delivery end ${String(ended)}`);
  if (test) return { counter, disable: false };
  if (ended === 'succeeded') return { counter: 0, disable: false };
  const next = counter + 1;
  return { counter: next, disable: next >= WEBHOOK_DISABLE_AFTER };
}
