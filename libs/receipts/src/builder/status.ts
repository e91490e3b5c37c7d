import type { Receipt } from '../schema';
import type { FrozenReceipt } from './freeze';

export type ReceiptStatus = 'active' | 'withdrawn' | 'expired' | 'partially_withdrawn';

/**
 * The receipt's status, derived from its event projection (events are read in order; the first end
 * wins):
 * - `withdrawn`: a whole withdrawal, or scoped withdrawals and objections that together end every
 *   granted purpose;
 * - `expired`: a `consent expired` row before any such withdrawal;
 * - `partially_withdrawn`: some, not all, granted purposes withdrawn or objected to;
 * - `active`: otherwise (a notice record is always active: it carries no consent to end).
 * An `objection recorded` ends a purpose only when the receipt lists it as granted (one appended
 * after the decision); one frozen with the decision names a purpose that was never granted.
 */
export function receiptStatus(receipt: Pick<Receipt | FrozenReceipt, 'event' | 'pii_processing'>): ReceiptStatus {
  const granted = new Set((receipt.pii_processing?.purposes ?? []).map((purpose) => purpose.purpose_id));
  const ended = new Set<string>();
  for (const event of receipt.event) {
    if (event.event_state === 'consent expired') return 'expired';
    if (event.event_state === 'objection recorded') {
      if (event.purpose_id === undefined || !granted.has(event.purpose_id)) continue;
    } else if (event.event_state !== 'consent withdrawn') {
      continue;
    }
    if (event.purpose_id === undefined) return 'withdrawn';
    ended.add(event.purpose_id);
    if (granted.size > 0 && [...granted].every((id) => ended.has(id))) return 'withdrawn';
  }
  return ended.size > 0 ? 'partially_withdrawn' : 'active';
}
