import { ChainWithdrawal, outcomesAfterWithdrawal, PERSON_WITHDRAWAL_CHANNELS } from '@dcr/domain';
import { OutboxEvent, outboxRow } from '@dcr/service-kit';

/**
 * The outbox event of a withdrawal from a record that a newer decision made (recordInChain: a newer
 * record, a consent given on the hosted pages) or carried onto a record (the person's own, made on
 * an older one): `consent.purpose_revoked`, or `consent.revoked` (`scope: "purpose"` unless the whole
 * record went). Its time is when the service recorded it (`occurredAt`: never before the newer
 * record's own consent.granted, which a receiver ordering by `created_at` would apply after it); the
 * person's time is `withdrawn_at` (the receipt's `consent withdrawn` time).
 */
export function recordWithdrawalEvent(
  withdrawal: ChainWithdrawal,
  context: {
    applicationId: string;
    flowId: string;
    /** The version of the record withdrawn from, as its consent.granted names it. */
    flowVersion: number;
    subjectId: string;
    occurredAt: Date;
    /** Who made the newer decision (a carried withdrawal of the person's own is theirs). */
    actor: { type: string; id?: string };
  },
): OutboxEvent {
  const carried = withdrawal.carriedFrom !== undefined;
  return outboxRow({
    type: withdrawal.event,
    applicationId: context.applicationId,
    occurredAt: context.occurredAt,
    data: {
      record_id: withdrawal.recordId,
      ...(withdrawal.supersededBy ? { superseded_by: withdrawal.supersededBy } : {}),
      flow_id: context.flowId,
      flow_version: context.flowVersion,
      subject: { id: context.subjectId },
      // Each purpose's outcome on the record now, which of them this withdrew, and which legitimate
      // interests it let stand the newer decision objects to (the older receipt's `objection
      // recorded`; a newer record's objection is no withdrawal mark: consent_status reads it from the
      // newer record, and nobody withdraws from a record a newer one replaced).
      purposes: outcomesAfterWithdrawal(withdrawal.before, withdrawal.withdrawn, withdrawal.objected),
      withdrawn: withdrawal.withdrawn,
      ...(withdrawal.objected.length > 0 ? { objected: withdrawal.objected } : {}),
      ...(withdrawal.channel !== undefined ? { channel: withdrawal.channel } : {}),
      withdrawn_at: withdrawal.at,
      ...(carried ? { carried_from: withdrawal.carriedFrom } : {}),
      actor: carried && (PERSON_WITHDRAWAL_CHANNELS as readonly string[]).includes(withdrawal.channel ?? '') ? { type: 'participant', id: context.subjectId } : context.actor,
      ...(withdrawal.event === 'consent.revoked' && !withdrawal.whole ? { scope: 'purpose' } : {}),
    },
  });
}
