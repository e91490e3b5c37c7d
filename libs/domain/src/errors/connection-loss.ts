import { DomainError } from './domain-error';

/**
 * SQLSTATEs of a database connection lost or refused: class 08 (connection exception), and the
 * server ending or refusing sessions (57P01 administrator shutdown, as `pg_terminate_backend` or a
 * failover, 57P02 crash shutdown, 57P03 cannot connect now).
 */
const LOST_CONNECTION_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;
/** The socket's own failures, when PostgreSQL had no chance to say anything. */
const LOST_CONNECTION_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** node-postgres's messages for a connection that ended under a query (they carry no code). */
const LOST_CONNECTION_MESSAGE = /^(Connection terminated|Client has encountered a connection error and is not queryable)/;

function lostConnection(error: { code?: unknown; message?: unknown }): boolean {
  const code = error.code;
  if (typeof code === 'string' && (LOST_CONNECTION_SQLSTATE.test(code) || LOST_CONNECTION_ERRNO.has(code))) return true;
  return typeof error.message === 'string' && LOST_CONNECTION_MESSAGE.test(error.message);
}

/**
 * Whether `error` (a driver's error, or TypeORM's QueryFailedError wrapping one as `driverError`) is
 * a database connection that was lost or refused: nothing about the request was wrong, and a retry,
 * on a fresh connection, may well succeed. A transaction on a connection that broke was not
 * committed (or, broken during COMMIT, is found by a retry's idempotency key).
 */
export function isLostDatabaseConnection(error: unknown): boolean {
  return driverErrorIs(error, lostConnection);
}

/** Whether `error`, or the driver's error a TypeORM QueryFailedError wraps (`driverError`), is one `matches` takes. */
function driverErrorIs(error: unknown, matches: (error: { code?: unknown; message?: unknown }) => boolean): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { code?: unknown; message?: unknown; driverError?: unknown };
  if (matches(candidate)) return true;
  const driverError = candidate.driverError;
  return typeof driverError === 'object' && driverError !== null && matches(driverError as { code?: unknown; message?: unknown });
}

/** What the caller is told for a lost database connection: a 503 with `Retry-After: 1`, not a 500. */
export const databaseConnectionLost = () =>
  new DomainError('service_unavailable', 'The database connection was lost while handling the request; try again', undefined, { retry_after: 1 });

/** SQLSTATE 53300 (too_many_connections): `sorry, too many clients already` at `max_connections`, or a role's or database's limit. */
const TOO_MANY_CONNECTIONS = '53300';
/** node-postgres's pool when no connection came free within its `connectionTimeoutMillis` (it carries no code). */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

function refusedConnection(error: { code?: unknown; message?: unknown }): boolean {
  return error.code === TOO_MANY_CONNECTIONS || error.message === POOL_TIMEOUT_MESSAGE;
}

/**
 * Whether `error` (a driver's error, or TypeORM's QueryFailedError wrapping one as `driverError`) is
 * a request that got no database connection: PostgreSQL refused a new one (53300, a loaded server at
 * `max_connections`: a pool opens its next connection under a burst), or the pool had none free in
 * time. The query never reached the database and nothing about the request was wrong: a retry may
 * well get one.
 */
export function isRefusedDatabaseConnection(error: unknown): boolean {
  return driverErrorIs(error, refusedConnection);
}

/** What the caller is told when the request got no database connection: a 503 with `Retry-After: 1`, not a 500. */
export const databaseConnectionRefused = () =>
  new DomainError('service_unavailable', 'The database had no connection free for the request; try again', undefined, { retry_after: 1 });
