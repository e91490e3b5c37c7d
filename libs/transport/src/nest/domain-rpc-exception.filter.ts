import { ArgumentsHost, Catch, Logger, LoggerService, RpcExceptionFilter } from '@nestjs/common';
import { SerializedDomainError } from '@dcr/domain';
import { Observable, throwError } from 'rxjs';
import { toSerializedError } from '../wire/rpc-errors';

/**
 * Global filter for microservices. Nest's BaseRpcExceptionFilter turns anything that is not an
 * RpcException into `{ status: 'error', message: 'Internal server error' }`, which would lose the
 * DomainError code; this one keeps it, and turns every other error into a generic internal_error
 * after logging it here (its message and stack never cross the wire).
 */
@Catch()
export class DomainRpcExceptionFilter implements RpcExceptionFilter<unknown, SerializedDomainError> {
  /**
   * The service's own logger: Nest's static Logger is one per process, so with several services in
   * one process (the embedded default) it would write this service's errors under another's name.
   */
  constructor(private readonly logger: LoggerService = new Logger(DomainRpcExceptionFilter.name)) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<SerializedDomainError> {
    const serialized = toSerializedError(exception, this.logger);
    return throwError(() => serialized);
  }
}
