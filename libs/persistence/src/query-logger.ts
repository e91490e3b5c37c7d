import type { Logger as TypeOrmLogger } from 'typeorm';

/** Where query problems go: the service's structured logger (pino's shape). */
export interface QueryLogSink {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const UNIQUE_VIOLATION = '23505';
const QUERY_TEXT_LIMIT = 300;

/**
 * TypeORM's log through the service's logger, without personal data: a failed query is logged with
 * its SQL text (shortened) and the database's error code and message, never its parameters (e-mail
 * addresses and other personal data travel as parameters, and logs may be shipped anywhere) and never
 * the error's detail (PostgreSQL repeats the offending values there). A unique violation is logged at
 * debug: the callers that can meet one (idempotency races, concurrent registrations) handle it, and
 * any other failure reaches the caller, whose error handling logs it in context. Every other query is
 * not logged at all.
 */
export class ServiceQueryLogger implements TypeOrmLogger {
  constructor(private readonly sink: QueryLogSink) {}

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    const code = typeof error === 'object' ? (error as { code?: string }).code : undefined;
    const fields = { db_error_code: code, db_error: typeof error === 'string' ? error : error.message, query: query.replace(/\s+/g, ' ').slice(0, QUERY_TEXT_LIMIT) };
    if (code === UNIQUE_VIOLATION) this.sink.debug(fields, 'query refused by a unique constraint');
    else this.sink.warn(fields, 'query failed');
  }

  logQuerySlow(time: number, query: string): void {
    this.sink.warn({ duration_ms: time, query: query.replace(/\s+/g, ' ').slice(0, QUERY_TEXT_LIMIT) }, 'slow query');
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.sink.info({}, message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.sink.warn({}, String(message));
  }
}
