import fc from 'fast-check';
import { canonicalJson, DomainError } from '@dcr/domain';
import { deepFreeze, frozenReceiptInputArbitrary, lifecycleArbitrary, SCHEMA_URL_BASE, utcTimeBetween } from '../testing';
import { validateReceipt } from '../schema';
import { freezeConsentReceipt } from './freeze';
import { projectReceipt } from './project';
import { receiptStatus } from './status';

describe('every valid input gives a schema-valid receipt', () => {
  it('when frozen and read with any lifecycle and clock', () => {
    fc.assert(
      fc.property(
        frozenReceiptInputArbitrary.chain((input) => {
          const frozen = deepFreeze(freezeConsentReceipt(input));
          return fc.tuple(fc.constant(input), fc.constant(frozen), lifecycleArbitrary(frozen), fc.option(utcTimeBetween(Date.UTC(2020, 0, 1), Date.UTC(2040, 0, 1)), { nil: undefined }));
        }),
        ([input, frozen, lifecycle, now]) => {
          const snapshot = JSON.stringify(frozen);
          const receipt = projectReceipt(frozen, lifecycle, { schemaUrl: SCHEMA_URL_BASE, ...(now !== undefined && { now }) });
          expect(validateReceipt(receipt).errors).toEqual([]);
          expect(JSON.stringify(frozen)).toBe(snapshot);
          // Plain JSON all the way down, so the canonical (RFC 8785) flavor can encode it.
          expect(canonicalJson(receipt)).toBe(canonicalJson(JSON.parse(JSON.stringify(receipt))));

          // Invariants of the builder beyond the schema.
          expect(receipt.event.slice(0, frozen.event.length)).toEqual(frozen.event);
          const appended = receipt.event.slice(frozen.event.length).map((e) => Date.parse(e.event_time));
          expect([...appended].sort((a, b) => a - b)).toEqual(appended);
          const partyIds = new Set(receipt.party_identification.map((p) => p.party_id));
          for (const id of receipt.pii_processing!.recipient_third_parties ?? []) expect(partyIds.has(id)).toBe(true);
          expect(receipt.pii_processing!.recipient_third_parties === undefined).toBe(input.application.recipients === undefined);
          expect('anonymous' in receipt.record).toBe('anonymous' in input.subject);
          const notice = receipt.record.record_type === 'notice_record';
          expect(notice).toBe(receipt.pii_processing!.purposes.length === 0);
          expect(['active', 'withdrawn', 'expired', 'partially_withdrawn']).toContain(receiptStatus(receipt));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('or refuses it with validation_failed, never with a schema violation', () => {
    // Arbitrary (often invalid) status maps: the builder either builds a valid receipt or names the problem.
    fc.assert(
      fc.property(
        frozenReceiptInputArbitrary,
        fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/), fc.constantFrom('granted' as const, 'declined' as const, 'objected' as const, 'noticed' as const), { maxKeys: 4 }),
        (input, statuses) => {
          const candidate = { ...input, decision: { ...input.decision, purposeStatuses: { ...input.decision.purposeStatuses, ...statuses } } };
          try {
            const frozen = freezeConsentReceipt(candidate);
            expect(validateReceipt(projectReceipt(frozen, [], { schemaUrl: SCHEMA_URL_BASE })).errors).toEqual([]);
          } catch (error) {
            expect(error).toBeInstanceOf(DomainError);
            expect((error as DomainError).code).toBe('validation_failed');
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
