import { Logger } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { QueryFailedError } from 'typeorm';
import { createTestDatabase, lostConnectionError, poolTimeoutError, refusedConnectionError, TestDatabase } from '@dcr/testing';
import { DomainError, wrongCountry } from '@dcr/domain';
import { decodeReply, encodeReply } from './envelopes';
import { fromSerializedError, toSerializedError } from './rpc-errors';

describe('RPC error codec', () => {
  let logger: Logger;
  beforeEach(() => {
    logger = new Logger('test');
    jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  });

  it('round-trips a DomainError through the JSON reply', () => {
    const reply = decodeReply(encodeReply({ err: toSerializedError(wrongCountry('DE'), logger) }));
    expect('error' in reply && reply.error).toEqual(wrongCountry('DE'));
    expect('error' in reply && reply.error).toBeInstanceOf(DomainError);
  });

  it('sends only the known fields of an error', () => {
    const error = Object.assign(new DomainError('conflict', 'Already exists'), { secret: 'x' });
    expect(toSerializedError(error, logger)).toEqual({ code: 'conflict', message: 'Already exists' });
    expect(fromSerializedError({ code: 'conflict', message: 'Already exists', secret: 'x' })).not.toHaveProperty('secret');
  });

  it('accepts an RpcException only when it wraps a serialised DomainError', () => {
    expect(toSerializedError(new RpcException({ code: 'gone', message: 'Gone' }), logger)).toEqual({ code: 'gone', message: 'Gone' });
    expect(toSerializedError(new RpcException('raw text'), logger).code).toBe('internal_error');
  });

  it('hides and logs everything else, including errors that merely look like ours', () => {
    const lookalike = Object.assign(new Error('db detail'), { code: 'conflict' });
    for (const thrown of [lookalike, 'a string', { code: 'not_a_code', message: 'm' }, undefined]) {
      const serialised = toSerializedError(thrown, logger);
      expect(serialised.code).toBe('internal_error');
      expect(serialised.message).not.toContain('db detail');
    }
    expect(logger.error).toHaveBeenCalledTimes(4);
  });

  it('treats an unreadable reply as internal_error', () => {
    for (const body of ['not json', '[]', '{"other":1}', '{"err":{"code":"bogus","message":"x"}}']) {
      const reply = decodeReply(body);
      expect('error' in reply && reply.error.code).toBe('internal_error');
    }
    expect(decodeReply('{"data":null}')).toEqual({ data: null });
  });
});

describe('RPC error codec: a database connection lost while handling a message', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('rpc_errors');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('crosses as service_unavailable with retry_after (a retry gets a fresh connection), not as an internal_error', async () => {
    // What a service saw when PostgreSQL's connections were terminated (a failover, an operator's
    // pg_terminate_backend): its query in flight failed with 57P01, wrapped as TypeORM wraps it.
    const failure = await lostConnectionError(database.url);
    expect(failure.code).toBe('57P01');
    const logger = new Logger('test');
    jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    for (const thrown of [failure, new QueryFailedError('SELECT pg_sleep(30)', [], failure)]) {
      expect(toSerializedError(thrown, logger)).toEqual({
        code: 'service_unavailable',
        message: 'The database connection was lost while handling the request; try again',
        extra: { retry_after: 1 },
      });
    }
  });

  it('crosses as service_unavailable with retry_after when PostgreSQL refuses a new connection (too many clients) or none comes free in time', async () => {
    // A pool opening its next connection on a loaded server is refused with 53300 ("sorry, too many
    // clients already"); a pool whose connections are all busy gives up after its timeout. Neither
    // is a fault of the request, and a retry may well get a connection: a 503, never a 500.
    const refused = await refusedConnectionError(database.url);
    expect(refused.code).toBe('53300');
    const exhausted = await poolTimeoutError(database.url);
    expect(exhausted.message).toBe('timeout exceeded when trying to connect');
    const logger = new Logger('test');
    jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    for (const thrown of [refused, new QueryFailedError('SELECT 1', [], refused), exhausted]) {
      expect(toSerializedError(thrown, logger)).toEqual({
        code: 'service_unavailable',
        message: 'The database had no connection free for the request; try again',
        extra: { retry_after: 1 },
      });
    }
    expect(logger.error).not.toHaveBeenCalled();
  });
});
