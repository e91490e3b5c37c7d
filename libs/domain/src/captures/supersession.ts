import type { RecordedPurpose } from './attestation';

/*
 * A later record for the same person and flow supersedes the earlier one. The earlier record stays
 * frozen; what moved is read from the two purpose maps.
 *
 * Decisions made where the specification leaves room:
 * - Withdrawn means granted before and present but not granted now (declined; `objected`/`noticed`
 *   cannot follow a grant on the same purpose, but they count too). A purpose absent from the new
 *   record (a newer flow version dropped it) is not withdrawn: the new record says nothing about it,
 *   so the earlier record still decides it (consentStatusOf reads records the same way).
 * - `stillGranted` is what stands granted after the new record, the purposes it left out carried over.
 * - `objected` lists the right-to-object (legitimate-interest) purposes the earlier record let stand
 *   (`noticed`, so its receipt lists them as granted) and the new record objects to: the caller appends
 *   an `objection recorded` to the earlier record's receipt for each, and the purpose no longer counts
 *   as in force there. An objection to a purpose the earlier record did not hold, or had objected to
 *   already, moves nothing on it (the new record's own receipt records its objections).
 * - The event is `consent.revoked` when a withdrawal or objection leaves nothing granted,
 *   `consent.purpose_revoked` when something stays granted, and none without either (a new grant is
 *   announced by the caller as `consent.granted`, not here).
 * - `changed` compares statuses purpose by purpose (a purpose appearing or disappearing is a change);
 *   with no previous record it is true. An unchanged re-submission is a re-affirmation, not a change.
 */

export type SupersessionEvent = 'consent.purpose_revoked' | 'consent.revoked';

export interface Supersession {
  changed: boolean;
  /** Purposes moved from granted to something else by the new record, in the new record's order. */
  withdrawn: string[];
  /** Purposes granted after the new record (its own, then carried over from the previous one). */
  stillGranted: string[];
  /** Legitimate-interest purposes the earlier record let stand (`noticed`) and the new record objects to, in its order. */
  objected: string[];
  event: SupersessionEvent | null;
}

const has = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);

export function supersessionOf(
  previous: Record<string, RecordedPurpose> | null,
  next: Record<string, RecordedPurpose>,
): Supersession {
  const before = previous ?? {};
  const withdrawn: string[] = [];
  const objected: string[] = [];
  const stillGranted: string[] = [];
  let changed = previous === null;

  for (const [key, purpose] of Object.entries(next)) {
    const earlier = has(before, key) ? before[key] : undefined;
    if (earlier?.status !== purpose.status) changed = true;
    if (earlier?.status === 'granted' && purpose.status !== 'granted') withdrawn.push(key);
    if (purpose.status === 'objected' && earlier?.status === 'noticed' && earlier.basis === 'legitimate_interest') objected.push(key);
    if (purpose.status === 'granted') stillGranted.push(key);
  }
  for (const [key, purpose] of Object.entries(before)) {
    if (has(next, key)) continue;
    changed = true;
    if (purpose.status === 'granted') stillGranted.push(key);
  }

  const event: SupersessionEvent | null =
    withdrawn.length === 0 && objected.length === 0 ? null : stillGranted.length > 0 ? 'consent.purpose_revoked' : 'consent.revoked';
  return { changed, withdrawn, stillGranted, objected, event };
}

/**
 * The record's overall status:
 * - `granted` when at least one purpose is granted;
 * - otherwise `declined` when the record holds a consent purpose (all of them declined);
 * - a record without any consent purpose but with legitimate-interest purposes is `granted` while at
 *   least one of them stands noticed (not objected to: an accepted opt-out counts as granted, the
 *   specification's "How a purpose counts as granted"), and `declined` when every one was objected
 *   to, whatever notices (contract, legal obligation) it also holds: they ask no decision;
 * - a notice-only record is `granted` (completing it is the grant), an empty one `declined`.
 * So `declined` always means the person let nothing proceed on consent or, absent consent purposes,
 * objected to everything they could object to.
 */
export function recordStatus(purposes: Record<string, RecordedPurpose>): 'granted' | 'declined' {
  const all = Object.values(purposes);
  if (all.some((purpose) => purpose.status === 'granted')) return 'granted';
  if (all.some((purpose) => purpose.status === 'declined')) return 'declined';
  const objectable = all.filter((purpose) => purpose.status === 'objected' || purpose.basis === 'legitimate_interest');
  if (objectable.length > 0) return objectable.some((purpose) => purpose.status === 'noticed') ? 'granted' : 'declined';
  return all.some((purpose) => purpose.status === 'noticed') ? 'granted' : 'declined';
}

/**
 * Whether withdrawing `withdrawn` from a record leaves nothing of it in force: no purpose still
 * granted, nor a legitimate-interest purpose noticed (not objected to: its receipt lists it among the
 * granted purposes; notice-only purposes are not listed). Only then is a withdrawal of the whole
 * record true; otherwise it is one per purpose.
 */
export function withdrawsAllInForce(purposes: Record<string, RecordedPurpose>, withdrawn: readonly string[]): boolean {
  const inForce = (purpose: RecordedPurpose) => purpose.status === 'granted' || (purpose.status === 'noticed' && purpose.basis === 'legitimate_interest');
  return Object.entries(purposes).every(([key, purpose]) => withdrawn.includes(key) || !inForce(purpose));
}

/** A purpose as a withdrawal reads it: its status, and whether an earlier withdrawal took it back (a granted purpose then reads `declined`). */
export interface PurposeInForce {
  status: string;
  withdrawn?: boolean;
  /** A granted purpose whose consent term ran out (it reads `expired`). */
  lapsed?: boolean;
}

/**
 * Each purpose's outcome on a record once `withdrawnNow` is withdrawn (and `objectedNow`, purposes
 * it let stand, objected to by a newer record), as the withdrawal events carry it
 * (`consent.purpose_revoked` and `consent.revoked`: "per-purpose outcome", the same shape as
 * `consent.granted`'s `purposes`): `withdrawn` for the purposes withdrawn now or by an earlier
 * withdrawal, `objected` for those objected to now, `expired` for a grant whose term ran out, every
 * other purpose its status (`granted`, `declined`, `objected`, `noticed`).
 */
export function outcomesAfterWithdrawal(
  purposes: Record<string, PurposeInForce>,
  withdrawnNow: readonly string[],
  objectedNow: readonly string[] = [],
): Record<string, string> {
  const now = new Set(withdrawnNow);
  const objected = new Set(objectedNow);
  return Object.fromEntries(
    Object.entries(purposes).map(([key, purpose]) => [
      key,
      now.has(key) || purpose.withdrawn === true ? 'withdrawn' : objected.has(key) ? 'objected' : purpose.lapsed === true ? 'expired' : purpose.status,
    ]),
  );
}
