import { ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldIssue } from '@dcr/domain';
import { cacheValidationMetadata } from './validation-metadata-cache';

/**
 * The ValidationPipe every microservice installs globally: unknown properties are refused (not
 * silently dropped), payloads become DTO instances, and a failure is a `validation_failed`
 * DomainError whose details name each field by its dotted path (`address.street`, `items.0.name`).
 */
export function createRpcValidationPipe(): ValidationPipe {
  cacheValidationMetadata();
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) =>
      new DomainError('validation_failed', 'The message did not pass validation', toFieldIssues(errors)),
  });
}

/** Flattens class-validator's error tree into one issue per failing field. */
export function toFieldIssues(errors: ValidationError[], parentPath = ''): FieldIssue[] {
  return errors.flatMap((error) => {
    const field = [parentPath, error.property].filter((part) => part !== undefined && part !== '').join('.');
    const reasons = Object.values(error.constraints ?? {});
    const own = reasons.length > 0 ? [{ field, reason: reasons.join('; ') }] : [];
    return [...own, ...toFieldIssues(error.children ?? [], field)];
  });
}
