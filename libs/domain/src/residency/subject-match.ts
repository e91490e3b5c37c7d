/** A person as recorded: their id and the identifiers they are known by (null: none yet). */
export interface RecordedPerson {
  id: string;
  email: string | null;
  externalId: string | null;
}

/**
 * Who a request naming a person by e-mail address and/or external id means, given the person
 * recorded with each (`byId`, `byAddress`): a person already recorded (`found`), one who lacks the
 * other identifier given, which is then kept for them (`bind`: as the Record API keeps it), someone
 * new, or a conflict (always on `external_id`).
 */
export type SubjectMatch<P extends RecordedPerson> =
  | { kind: 'found'; person: P }
  | { kind: 'bind'; person: P; field: 'email' | 'external_id'; value: string }
  | { kind: 'new' }
  | { kind: 'conflict'; field: 'external_id'; reason: string };

/**
 * One person per application and e-mail address and per external id (the Record API's rule, which
 * the decisions service's import-batch `subjectConflict` extends to the rows of one batch): given
 * both, they must name the same person, one who lacks the other (bound to them), or no one. An external id that belongs to another person than the address,
 * or to a person with another address, or an address whose person has another external id, is a
 * conflict: keeping it would make an identifier name two people, and leaving it out would drop it
 * silently. `emailField`: how the request names the address, for the reason.
 */
export function matchSubject<P extends RecordedPerson>(
  given: { email?: string; externalId?: string },
  byId: P | null,
  byAddress: P | null,
  emailField = 'email',
): SubjectMatch<P> {
  const conflict = (reason: string): SubjectMatch<P> => ({ kind: 'conflict', field: 'external_id', reason });
  if (given.email && given.externalId) {
    if (byId && byAddress && byId.id !== byAddress.id) return conflict(`belongs to another person of this application than ${emailField}`);
    if (byId && !byAddress) {
      if (byId.email !== null) return conflict('belongs to a person of this application recorded with another e-mail address');
      return { kind: 'bind', person: byId, field: 'email', value: given.email };
    }
    if (!byId && byAddress) {
      if (byAddress.externalId !== null) return conflict('the person recorded with this e-mail address has another external_id');
      return { kind: 'bind', person: byAddress, field: 'external_id', value: given.externalId };
    }
  }
  const person = byId ?? byAddress;
  return person ? { kind: 'found', person } : { kind: 'new' };
}
