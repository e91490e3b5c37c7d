import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { DomainError, unstorableInputIssues } from '@dcr/domain';
import { bodyNotAnObject } from './error-responder';
import { describedQueryIssues, repeatedQueryParameter, repeatedQueryParameters } from './query-parameters';
import { buildsOnlyInstances, cacheValidationMetadata, checkAsMessage, Class, isPlainObject, toFieldIssues } from '@dcr/transport';

/**
 * Fastify's parsed query string: an object whose prototype is an empty one without a prototype of
 * its own (fast-querystring's), so not a plain object in `isPlainObject`'s sense, but nothing
 * inherited can be read from it.
 */
/**
 * A body DTO may name problems its decorators cannot (the values of a map keyed by the caller, named
 * by their own path): they are added to the 422 of a body that breaks its DTO, so that one answer
 * names every malformed field. A body that passes its DTO is left to the route.
 */
export interface CompanionIssues {
  companionIssues(body: Record<string, unknown>): Array<{ field: string; reason: string }>;
}

function withCompanionIssues(metatype: unknown, body: unknown, issues: Array<{ field: string; reason: string }>): Array<{ field: string; reason: string }> {
  const companion = (metatype as Partial<CompanionIssues> | undefined)?.companionIssues;
  if (typeof companion !== 'function' || !isPlainObject(body)) return issues;
  const named = new Set(issues.map((issue) => issue.field));
  return [...issues, ...companion(body).filter((issue) => !named.has(issue.field))];
}

function isQueryObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validation at the edge. A body that breaks its DTO is a 422 whose `details` name the fields, and
 * unknown fields are refused, as is text no field could be stored with (U+0000, an unpaired
 * surrogate) and nesting deeper than 64 levels (unstorableInputIssues); a body that is not a JSON object, or bad query and path parameters,
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
        new DomainError('validation_failed', 'The request did not pass validation', toFieldIssues(errors)),
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
      throw bodyNotAnObject();
    }
    // Text the database cannot keep, or nesting too deep to carry on, is refused here, naming it,
    // before any of the request is written. Only in a JSON body (plain objects and arrays): a form's
    // (fast-querystring's objects, not plain) is read by pages that answer in HTML, a text/plain or
    // raw one by its route.
    if (metadata.type === 'body' && (isPlainObject(value) || Array.isArray(value))) {
      const unstorable = unstorableInputIssues(value);
      if (unstorable.length > 0) throw new DomainError('validation_failed', 'The request did not pass validation', unstorable);
    }
    // A parameter given twice that the DTO takes once is named as such, not by what its DTO says of
    // a list ("must be a string"); the query's other parameters are checked as ever, in one answer.
    if (metadata.type === 'query' && validatesClass && isQueryObject(value)) {
      const repeated = repeatedQueryParameters(metadata.metatype as Class, value);
      if (repeated.length > 0) {
        const others = await this.validateInput(Object.fromEntries(Object.entries(value).filter(([name]) => !repeated.includes(name))), metadata).then(
          () => [],
          (error: unknown) => {
            if (error instanceof DomainError && error.details) return error.details.filter((issue) => !repeated.includes(issue.field));
            throw error;
          },
        );
        throw new DomainError('invalid_request', 'Invalid query parameters', [...repeated.map(repeatedQueryParameter), ...others]);
      }
    }
    // A body or query whose DTO needs nothing of class-transformer but instances of its nested
    // classes is checked without copying it first (the RPC pipe's way, libs/transport): the same
    // rules and issues, at a fraction of the cost on the busiest routes (a verification's query).
    // Anything else (a query DTO that converts `limit` to a number, say) takes Nest's pipe.
    const fastPath = metadata.type === 'body' ? isPlainObject(value) : metadata.type === 'query' && isQueryObject(value);
    if (fastPath && validatesClass && buildsOnlyInstances(metadata.metatype as Class)) {
      const checked = checkAsMessage(metadata.metatype as Class, value as Record<string, unknown>);
      if (!('issues' in checked)) return checked.instance;
      if (metadata.type === 'body') throw new DomainError('validation_failed', 'The request did not pass validation', withCompanionIssues(metadata.metatype, value, checked.issues));
      throw new DomainError('invalid_request', 'Invalid query parameters', describedQueryIssues(checked.issues));
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof DomainError && metadata.type === 'body' && error.code === 'validation_failed' && error.details) {
        throw new DomainError(error.code, error.message, withCompanionIssues(metadata.metatype, value, error.details), error.extra);
      }
      if (error instanceof DomainError && metadata.type !== 'body') {
        const details = (error as DomainError).details;
        throw new DomainError('invalid_request', `Invalid ${metadata.type} parameters`, metadata.type === 'query' && details ? describedQueryIssues(details) : details);
      }
      throw error;
    }
  }
}
