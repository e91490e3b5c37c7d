import { addIsoDuration, parseIsoDuration } from '@dcr/domain';
import {
  assertValidReceipt,
  EventChannel,
  EventType,
  RECEIPT_EVENT_CHANNELS,
  RECEIPT_SCHEMA_PATH,
  Receipt,
  ReceiptEvent,
  receiptSchemaUrl,
} from '../schema';
import type { FrozenReceipt } from './freeze';
import { jsonCopy } from './json-copy';
import { ReceiptInputIssues } from './receipt-input-error';

/**
 * A post-decision fact from existing evidence that a read turns into an appended event. Expiry is not
 * a fact: it is derived from the given time, the frozen `validity_duration` and the injected `now`.
 */
export type LifecycleFact =
  | {
      kind: 'withdrawal';
      /** When the withdrawal was recorded (ISO 8601 UTC). */
      at: string;
      /** The withdrawn purpose; absent for a withdrawal of the whole consent. */
      purposeId?: string;
      /** Where it was made from, when known. */
      channel?: EventChannel;
    }
  | {
      /**
       * An objection to a right-to-object (legitimate-interest) purpose the record let stand (it lists
       * it as granted), made after the decision: a newer record of the person that objects to it.
       */
      kind: 'objection';
      /** When the objection was recorded (ISO 8601 UTC). */
      at: string;
      /** The purpose objected to: an objection is always to one purpose. */
      purposeId: string;
      /** Where it was made from, when known. */
      channel?: EventChannel;
    };

export interface ProjectionOptions {
  /** `{schema_url}` (the base), or the full schema URL ending in `/schemas/receipt/v2/record.json`. */
  schemaUrl: string;
  /** The read's clock. Without it no expiry is derived (nothing is guessed). */
  now?: Date | string;
}

/** Who made a withdrawal or objection from this channel: the person (explicit), implied by a newer record, or a system. */
const EVENT_TYPE_OF_CHANNEL: Record<EventChannel, EventType> = {
  own_records: 'explicit',
  email_link: 'explicit',
  receipt_link: 'explicit',
  // A change made in the mailing tool is recorded as the person's withdrawal.
  mailing_tool: 'explicit',
  newer_record: 'implicit',
  organisation: 'regular',
  end_of_term: 'regular',
  subject_sweep: 'regular',
  // Evidence that predates the channel: the person's own withdrawal, the only kind there was.
  unspecified: 'explicit',
};

/**
 * When the consent expires: the `consent given` time plus its `validity_duration` (UTC calendar
 * arithmetic), as ISO 8601 UTC; undefined when the record carries no expiry, or when it ends past
 * the last instant a date can name (a flow may declare `P300000Y`): it never lapses, as
 * consent_status reads it (consentLapsesAt).
 */
export function consentExpiresAt(frozen: Pick<FrozenReceipt, 'event'>): string | undefined {
  const given = frozen.event.find((event) => event.event_state === 'consent given');
  if (!given?.validity_duration) return undefined;
  const duration = parseIsoDuration(given.validity_duration);
  if (!duration) return undefined;
  let expiry: Date;
  try {
    expiry = addIsoDuration(new Date(given.event_time), duration);
  } catch {
    return undefined;
  }
  // With its milliseconds, as every other time of a receipt and of the API (2026-03-01T10:00:00.000Z).
  return expiry.toISOString();
}

function schemaUrlOf(value: string): string {
  const trimmed = value.replace(/\/+$/, '');
  return trimmed.endsWith(RECEIPT_SCHEMA_PATH) ? trimmed : receiptSchemaUrl(trimmed);
}

function timeOf(text: string): number {
  return Date.parse(text);
}

function checkFacts(frozen: FrozenReceipt, facts: readonly LifecycleFact[], issues: ReceiptInputIssues): void {
  const granted = new Set(frozen.pii_processing.purposes.map((purpose) => purpose.purpose_id));
  const standing = new Set(frozen.pii_processing.purposes.filter((purpose) => purpose.lawful_basis === 'legitimate_interest').map((purpose) => purpose.purpose_id));
  const isConsentRecord = (frozen.record.record_type ?? 'consent_record') === 'consent_record';
  facts.forEach((fact, index) => {
    const at = `lifecycle[${index}]`;
    if (fact.kind !== 'withdrawal' && fact.kind !== 'objection') {
      issues.add(`${at}.kind`, 'must be withdrawal or objection');
      return;
    }
    issues.time(`${at}.at`, fact.at);
    if (fact.kind === 'objection') {
      if (typeof fact.purposeId !== 'string' || !standing.has(fact.purposeId)) {
        issues.add(`${at}.purposeId`, `${String(fact.purposeId)} is not a legitimate-interest purpose this record lets stand`);
      }
    } else {
      if (!isConsentRecord) issues.add(at, `a ${frozen.record.record_type} carries no consent to withdraw`);
      if (fact.purposeId !== undefined && !granted.has(fact.purposeId)) {
        issues.add(`${at}.purposeId`, `${fact.purposeId} is not a granted purpose of this record`);
      }
    }
    if (fact.channel !== undefined && !RECEIPT_EVENT_CHANNELS.includes(fact.channel)) {
      issues.add(`${at}.channel`, `must be one of ${RECEIPT_EVENT_CHANNELS.join(', ')}`);
    }
  });
}

/**
 * Whether the consent had already ended by `time` through withdrawals and objections: a whole
 * withdrawal, or scoped withdrawals and objections that together end every granted purpose, at or
 * before it.
 */
function withdrawnBy(time: number, ends: readonly ReceiptEvent[], grantedIds: readonly string[]): boolean {
  const ended = new Set<string>();
  for (const event of ends) {
    if (timeOf(event.event_time) > time) continue;
    if (event.purpose_id === undefined) return true;
    ended.add(event.purpose_id);
  }
  return grantedIds.length > 0 && grantedIds.every((id) => ended.has(id));
}

/**
 * The receipt as read: `$schema`, then the frozen sections untouched (copied, never mutated), then
 * the post-decision events appended after the frozen ones, in time order:
 * - `consent withdrawn` per withdrawal fact: the principal (the record id on anonymous records) as
 *   actor, `purpose_id` when scoped, `event_channel` when known;
 * - `objection recorded` per objection fact, the same way, always with `purpose_id` (the
 *   legitimate-interest purpose the record let stand and the person objected to since: it no longer
 *   counts as in force on this record);
 * - `consent expired` once `now` has reached the given time plus `validity_duration`, with the platform
 *   processor as actor and the moment of expiry as its time; suppressed when the consent had already
 *   been withdrawn whole (or purpose by purpose, objections counting) by then.
 * `pii_processing` is never rewritten: a withdrawn purpose stays listed as granted at decision time.
 * Facts that do not fit the record (a withdrawal on a notice record, an unknown purpose, an objection
 * to a purpose the record does not let stand on legitimate interest, a time that is not ISO 8601 UTC)
 * are refused with `validation_failed`. The result is checked against the schema.
 */
export function projectReceipt(frozen: FrozenReceipt, lifecycle: readonly LifecycleFact[], options: ProjectionOptions): Receipt {
  const issues = new ReceiptInputIssues();
  checkFacts(frozen, lifecycle, issues);
  const now = options.now === undefined ? undefined : typeof options.now === 'string' ? Date.parse(options.now) : options.now.getTime();
  if (now !== undefined && !Number.isFinite(now)) issues.add('options.now', 'must be a valid time');
  issues.throwIfAny('The receipt lifecycle is not valid');

  const principal = frozen.record.pii_principal_id ?? frozen.record.record_id;
  const ends: ReceiptEvent[] = lifecycle.map((fact) => ({
    event_time: fact.at,
    entity_id: principal,
    event_type: fact.channel ? EVENT_TYPE_OF_CHANNEL[fact.channel] : 'explicit',
    event_state: fact.kind === 'objection' ? 'objection recorded' : 'consent withdrawn',
    ...(fact.purposeId !== undefined && { purpose_id: fact.purposeId }),
    ...(fact.channel !== undefined && { event_channel: fact.channel }),
  }));

  const appended: ReceiptEvent[] = [...ends];
  const expiresAt = consentExpiresAt(frozen);
  if (expiresAt !== undefined && now !== undefined && now >= timeOf(expiresAt)) {
    const grantedIds = frozen.pii_processing.purposes.map((purpose) => purpose.purpose_id);
    if (!withdrawnBy(timeOf(expiresAt), ends, grantedIds)) {
      const processor = frozen.party_identification.find((party) => party.party_role === 'processor');
      appended.push({
        event_time: expiresAt,
        entity_id: processor ? processor.party_id : frozen.record.record_id,
        event_type: 'regular',
        event_state: 'consent expired',
      });
    }
  }
  // Stable sort: at equal times, withdrawals and objections keep their given order and come before the expiry.
  appended.sort((a, b) => timeOf(a.event_time) - timeOf(b.event_time));

  const copy = jsonCopy(frozen);
  const receipt: Receipt = {
    $schema: schemaUrlOf(options.schemaUrl),
    record: copy.record,
    pii_processing: copy.pii_processing,
    party_identification: copy.party_identification,
    event: [...copy.event, ...appended],
    extensions: copy.extensions,
  };
  assertValidReceipt(receipt);
  return receipt;
}
