import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldIssue } from '@dcr/domain';
import { cacheValidationMetadata } from '@dcr/transport';

function flatten(errors: ValidationError[], parent = ''): FieldIssue[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, reason: Object.values(error.constraints).join('; ') }] : [];
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

const isPlainObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Validation at the edge. A body that breaks its DTO is a 422 whose `details` name the fields, and
 * unknown fields are refused; a body that is not a JSON object, or bad query and path parameters,
 * are a 400 (`invalid_request`), still naming the parameters.
 */
export class EdgeValidationPipe extends ValidationPipe {
  constructor() {
    cacheValidationMetadata();
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) =>
        new DomainError('validation_failed', 'The request did not pass validation', flatten(errors)),
    });
  }

  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Values from custom parameter decorators (the authenticated principal) are ours, not input.
    if (metadata.type === 'custom') return Promise.resolve(value);
    return this.validateInput(value, metadata);
  }

  private async validateInput(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const validatesClass = typeof metadata.metatype === 'function' && this.toValidate(metadata);
    if (metadata.type === 'body' && validatesClass && !isPlainObject(value)) {
      throw new DomainError('invalid_request', 'The request body must be a JSON object');
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof DomainError && metadata.type !== 'body') {
        throw new DomainError('invalid_request', `Invalid ${metadata.type} parameters`, (error as DomainError).details);
      }
      throw error;
    }
  }
}
