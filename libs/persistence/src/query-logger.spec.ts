import { ServiceQueryLogger } from './query-logger';

describe('ServiceQueryLogger', () => {
  const sink = () => ({ debug: jest.fn(), info: jest.fn(), warn: jest.fn() });
  const email = 'ada.lovelace@example.com';
  const query = `INSERT INTO "decisions"."subjects" ("id", "email")\n       VALUES ($1, $2)`;

  it('logs a failed query with its SQL and error code, never its parameters or the error detail', () => {
    const log = sink();
    const error = Object.assign(new Error('null value in column "id" violates not-null constraint'), { code: '23502', detail: `Failing row contains (null, ${email}).` });
    new ServiceQueryLogger(log).logQueryError(error, query);
    expect(log.warn).toHaveBeenCalledWith(
      { db_error_code: '23502', db_error: 'null value in column "id" violates not-null constraint', query: 'INSERT INTO "decisions"."subjects" ("id", "email") VALUES ($1, $2)' },
      'query failed',
    );
    expect(JSON.stringify(log.warn.mock.calls)).not.toContain(email);
  });

  it('logs a unique violation (an idempotency or registration race its caller handles) at debug only', () => {
    const log = sink();
    const error = Object.assign(new Error('duplicate key value violates unique constraint "UQ_subjects_email"'), { code: '23505', detail: `Key (email)=(${email}) already exists.` });
    new ServiceQueryLogger(log).logQueryError(error, query);
    expect(log.warn).not.toHaveBeenCalled();
    expect(log.debug).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(log.debug.mock.calls)).not.toContain(email);
  });

  it('does not log successful queries, and shortens long SQL', () => {
    const log = sink();
    const logger = new ServiceQueryLogger(log);
    logger.logQuery();
    logger.logQuerySlow(1200, `SELECT ${'x, '.repeat(400)}1`);
    expect(log.debug).not.toHaveBeenCalled();
    expect(log.warn.mock.calls[0][0].query).toHaveLength(300);
  });
});
