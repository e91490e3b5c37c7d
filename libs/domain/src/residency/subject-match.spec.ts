import fc from 'fast-check';
import { matchSubject, RecordedPerson } from './subject-match';

const person = (id: string, email: string | null, externalId: string | null): RecordedPerson => ({ id, email, externalId });

describe('matchSubject', () => {
  it('finds the person both identifiers name, or the one either names when only one is given', () => {
    const ada = person('sub_1', 'ada@example.com', 'crm-1');
    expect(matchSubject({ email: 'ada@example.com', externalId: 'crm-1' }, ada, ada)).toEqual({ kind: 'found', person: ada });
    expect(matchSubject({ email: 'ada@example.com' }, null, ada)).toEqual({ kind: 'found', person: ada });
    expect(matchSubject({ externalId: 'crm-1' }, ada, null)).toEqual({ kind: 'found', person: ada });
    expect(matchSubject({ email: 'new@example.com', externalId: 'crm-new' }, null, null)).toEqual({ kind: 'new' });
  });

  it('binds an external id to the person of the address who has none yet, and an address to the person of the external id who has none', () => {
    const byAddress = person('sub_2', 'bea@example.com', null);
    expect(matchSubject({ email: 'bea@example.com', externalId: 'crm-2' }, null, byAddress)).toEqual({ kind: 'bind', person: byAddress, field: 'external_id', value: 'crm-2' });
    const byId = person('sub_3', null, 'crm-3');
    expect(matchSubject({ email: 'cy@example.com', externalId: 'crm-3' }, byId, null)).toEqual({ kind: 'bind', person: byId, field: 'email', value: 'cy@example.com' });
  });

  it('refuses on external_id what would name two people or drop an identifier, naming the address field as the caller names it', () => {
    const ada = person('sub_1', 'ada@example.com', 'crm-1');
    const bob = person('sub_2', 'bob@example.com', null);
    expect(matchSubject({ email: 'bob@example.com', externalId: 'crm-1' }, ada, bob, 'subject.email')).toEqual({
      kind: 'conflict',
      field: 'external_id',
      reason: 'belongs to another person of this application than subject.email',
    });
    expect(matchSubject({ email: 'other@example.com', externalId: 'crm-1' }, ada, null)).toEqual({
      kind: 'conflict',
      field: 'external_id',
      reason: 'belongs to a person of this application recorded with another e-mail address',
    });
    expect(matchSubject({ email: 'ada@example.com', externalId: 'crm-9' }, null, ada)).toEqual({
      kind: 'conflict',
      field: 'external_id',
      reason: 'the person recorded with this e-mail address has another external_id',
    });
  });

  it('never answers a person that lacks or contradicts a given identifier, except to bind the one they lack', () => {
    const identifier = fc.constantFrom('a', 'b', null);
    const recorded = fc.record({ id: fc.constantFrom('p', 'q'), email: identifier, externalId: identifier });
    fc.assert(
      fc.property(fc.option(recorded, { nil: null }), fc.option(recorded, { nil: null }), fc.constantFrom('a', 'b'), fc.constantFrom('a', 'b'), (id, address, email, externalId) => {
        // What a lookup can return: the person recorded with each identifier, or no one.
        const byId: RecordedPerson | null = id && { ...id, externalId };
        const byAddress: RecordedPerson | null = address && { ...address, email };
        fc.pre(!byId || !byAddress || byId.id !== byAddress.id || (byId.email === byAddress.email && byId.externalId === byAddress.externalId));
        const match = matchSubject({ email, externalId }, byId, byAddress);
        if (match.kind === 'found') expect([match.person.email, match.person.externalId]).toEqual([email, externalId]);
        if (match.kind === 'bind') {
          const kept = match.field === 'email' ? match.person.email : match.person.externalId;
          expect(kept).toBeNull();
          expect(match.value).toBe(match.field === 'email' ? email : externalId);
        }
        if (match.kind === 'new') expect([byId, byAddress]).toEqual([null, null]);
      }),
    );
  });
});
