import { DomainError } from '@dcr/domain';
import pino from 'pino';
import { QueryFailedError } from 'typeorm';
import { createTestDatabase, lostConnectionError, poolTimeoutError, refusedConnectionError } from '@dcr/testing';
import { noResponder, payloadTooLarge, timedOut } from '@dcr/transport';
import { errorAnswer, errorBody, MAX_DETAILS } from './error-responder';

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

  it('gives a 503 the Retry-After its error names (a receipt on its way, a service not answering), and none to a 503 that names no time', () => {
    expect(retryAfter(new DomainError('service_unavailable', 'The receipt is not frozen yet', undefined, { retry_after: 1 }))).toBe('1');
    expect(retryAfter(new DomainError('service_unavailable', 'The mail is not configured'))).toBeUndefined();
    // A service that does not answer (restarting, or down): usually back within seconds.
    expect(retryAfter(noResponder('us.receipts.export'))).toBe('1');
    expect(retryAfter(DomainError.fromJSON(noResponder('us.receipts.export').toJSON()))).toBe('1');
  });

  it('names no internal bus subject to the caller when a service does not answer or the bus refuses the message; the log keeps it', () => {
    const lines: string[] = [];
    const recording = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const subject = 'dist2.us.decisions.records.create';
    const failures = [
      [noResponder(subject), 503, 'service_unavailable'],
      [timedOut(subject, 5000), 504, 'upstream_timeout'],
      [payloadTooLarge(subject), 413, 'payload_too_large'],
      // The same failure met by a service behind the gateway, and carried back over the bus.
      [DomainError.fromJSON(noResponder('dist2.us.receipts.ingest').toJSON()), 503, 'service_unavailable'],
    ] as const;
    for (const [failure, status, code] of failures) {
      const answer = errorAnswer(failure, 'req_1', recording, () => false);
      expect([answer.status, answer.code]).toEqual([status, code]);
      expect(answer.body.message).not.toMatch(/dist2|decisions\.|receipts\.|subject|\bms\b/);
      expect(answer.body.message.length).toBeGreaterThan(20);
    }
    expect(lines.filter((line) => line.includes(subject))).toHaveLength(3);
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

  it("answers a 503 with Retry-After, not a 500, when the gateway's own database refuses a new connection (too many clients) or none comes free in time", async () => {
    const database = await createTestDatabase('error_responder');
    try {
      const refused = await refusedConnectionError(database.url);
      expect(refused.code).toBe('53300');
      for (const thrown of [refused, new QueryFailedError('SELECT 1', [], refused), await poolTimeoutError(database.url)]) {
        const answer = errorAnswer(thrown, 'req_1', logger, () => false);
        expect([answer.status, answer.code, answer.body.retry_after]).toEqual([503, 'service_unavailable', 1]);
        expect(answer.body.message).toBe('The database had no connection free for the request; try again');
        expect(retryAfter(thrown)).toBe('1');
      }
    } finally {
      await database.drop();
    }
  });

  it('lists at most MAX_DETAILS details, counts the rest in details_omitted and says so in the message; fewer are listed whole', () => {
    const issues = Array.from({ length: 12_000 }, (_, i) => ({ field: `decisions.k${i}`, reason: 'is not a purpose of this flow' }));
    const body = errorBody(new DomainError('validation_failed', 'The request did not pass validation', issues), 'req_1');
    expect(body.details).toHaveLength(MAX_DETAILS);
    expect(body.details![MAX_DETAILS - 1]).toEqual(issues[MAX_DETAILS - 1]);
    expect(body.details_omitted).toBe(12_000 - MAX_DETAILS);
    expect(body.message).toBe(`The request did not pass validation (12000 problems; the first ${MAX_DETAILS} are listed)`);

    const few = errorBody(new DomainError('validation_failed', 'The request did not pass validation', issues.slice(0, MAX_DETAILS)), 'req_1');
    expect(few.details).toEqual(issues.slice(0, MAX_DETAILS));
    expect(few).not.toHaveProperty('details_omitted');
    expect(few.message).toBe('The request did not pass validation');
  });
});
