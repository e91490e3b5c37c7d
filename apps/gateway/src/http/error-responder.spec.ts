import { DomainError } from '@dcr/domain';
import pino from 'pino';
import { QueryFailedError } from 'typeorm';
import { createTestDatabase, lostConnectionError } from '@dcr/testing';
import { errorAnswer } from './error-responder';

describe('errorAnswer', () => {
  const logger = pino({ level: 'silent' });
  const retryAfter = (error: unknown, has = false) => errorAnswer(error, 'req_1', logger, () => has).headers.find(([name]) => name === 'retry-after')?.[1];

  it("gives a 429 the Retry-After its error names in retry_after (an hour for a person's sign-in codes), else one second", () => {
    expect(retryAfter(new DomainError('rate_limited', 'Too many sign-in codes', undefined, { retry_after: 3600 }))).toBe('3600');
    expect(retryAfter(new DomainError('rate_limited', 'Slow down', undefined, { retry_after: 2.2 }))).toBe('3');
    expect(retryAfter(new DomainError('rate_limited', 'Slow down'))).toBe('1');
    expect(retryAfter(new DomainError('rate_limited', 'Slow down', undefined, { retry_after: 'soon' }))).toBe('1');
  });

  it('leaves a Retry-After already set (the rate limiter sets its own) and adds none to other errors', () => {
    expect(retryAfter(new DomainError('rate_limited', 'Slow down', undefined, { retry_after: 3600 }), true)).toBeUndefined();
    expect(retryAfter(new DomainError('not_found', 'Nothing here'))).toBeUndefined();
  });

  it('gives a 503 the Retry-After its error names (a receipt on its way), and none to a 503 that names no time', () => {
    expect(retryAfter(new DomainError('service_unavailable', 'The receipt is not frozen yet', undefined, { retry_after: 1 }))).toBe('1');
    expect(retryAfter(new DomainError('service_unavailable', 'No service is listening on us.receipts.export'))).toBeUndefined();
  });

  it("answers a 503 with Retry-After, not a 500, when the gateway's own database connection was lost under the request", async () => {
    const database = await createTestDatabase('error_responder');
    try {
      const failure = await lostConnectionError(database.url);
      for (const thrown of [failure, new QueryFailedError('SELECT 1', [], failure)]) {
        const answer = errorAnswer(thrown, 'req_1', logger, () => false);
        expect([answer.status, answer.code, answer.body.retry_after]).toEqual([503, 'service_unavailable', 1]);
        expect(retryAfter(thrown)).toBe('1');
      }
    } finally {
      await database.drop();
    }
  });
});
