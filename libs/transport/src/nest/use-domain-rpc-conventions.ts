import { INestMicroservice, LoggerService } from '@nestjs/common';
import { DomainRpcExceptionFilter } from './domain-rpc-exception.filter';
import { createRpcValidationPipe } from './rpc-validation.pipe';

/**
 * Installs what every microservice needs for errors to cross a hop intact: the validation pipe and
 * the DomainError-preserving exception filter. Call it before `app.listen()`.
 */
export function useDomainRpcConventions<T extends INestMicroservice>(app: T, logger?: LoggerService): T {
  app.useGlobalPipes(createRpcValidationPipe());
  app.useGlobalFilters(new DomainRpcExceptionFilter(logger));
  return app;
}
