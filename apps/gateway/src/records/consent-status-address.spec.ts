import 'reflect-metadata';
import { DomainError } from '@dcr/domain';
import { consentStatusAddress } from './records.controller';

function refusal(query: Record<string, unknown>): DomainError {
  try {
    consentStatusAddress(query);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error(`${JSON.stringify(query)} was not refused`);
}

describe('consentStatusAddress', () => {
  it('takes exactly one of the three parameters, as Fastify hands them over flat or nested', () => {
    expect(consentStatusAddress({ 'subject[external_id]': 'crm-4711' })).toEqual({ external_id: 'crm-4711' });
    expect(consentStatusAddress({ subject: { email: 'ada@example.com' } })).toEqual({ email: 'ada@example.com' });
  });

  it('refuses none, two, a repeated or a malformed one, naming the parameter', () => {
    expect(refusal({}).details).toEqual([{ field: 'subject', reason: 'exactly one of subject[external_id], subject[email], subject[id] is required' }]);
    // Two parameters: each named by itself, one detail row per parameter (a field is a path, never a list of them).
    expect(refusal({ 'subject[email]': 'ada@example.com', 'subject[id]': 'sub_x' }).details).toEqual([
      { field: 'subject[email]', reason: 'exactly one of subject[external_id], subject[email], subject[id] is required; subject[id] is given too' },
      { field: 'subject[id]', reason: 'exactly one of subject[external_id], subject[email], subject[id] is required; subject[email] is given too' },
    ]);
    // Worded as every other repeated query parameter is (the validation pipe's).
    const repeated = refusal({ 'subject[email]': ['a@example.com', 'b@example.com'] });
    expect([repeated.message, repeated.details]).toEqual(['subject[email] must be given once', [{ field: 'subject[email]', reason: 'must be given once' }]]);
    expect(refusal({ 'subject[email]': 'not-an-address' }).details).toEqual([{ field: 'subject[email]', reason: 'must be an e-mail address' }]);
  });
});
