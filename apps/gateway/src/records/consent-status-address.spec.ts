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

  it('refuses a parameter it does not know, naming it, as the query DTOs of other routes do', () => {
    // A misspelt parameter beside a good one was ignored without a word.
    const misspelt = refusal({ 'subject[email]': 'ada@example.com', 'subject[externalid]': 'crm-4711' });
    expect([misspelt.code, misspelt.details]).toEqual(['invalid_request', [{ field: 'subject[externalid]', reason: 'is not a parameter of consent_status' }]]);
    const nested = refusal({ subject: { email: 'ada@example.com', externalid: 'crm-4711' } });
    expect(nested.details).toEqual([{ field: 'subject[externalid]', reason: 'is not a parameter of consent_status' }]);
    expect(refusal({ 'subject[id]': 'sub_us0123456789abcdefgh', limit: '5' }).details).toEqual([{ field: 'limit', reason: 'is not a parameter of consent_status' }]);
  });
});
