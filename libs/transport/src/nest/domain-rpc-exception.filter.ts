import { ArgumentsHost, Catch, Logger, RpcExceptionFilter } from '@nestjs/common';
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
  private readonly logger = new Logger(DomainRpcExceptionFilter.name);

  catch(exception: unknown, _host: ArgumentsHost): Observable<SerializedDomainError> {
    const serialized = toSerializedError(exception, this.logger);
    return throwError(() => serialized);
  }
}
