import { ArgumentMetadata, PipeTransform } from '@nestjs/common';
import { DomainError, FieldIssue } from '@dcr/domain';
import { TransformationType } from 'class-transformer';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage, validateSync, ValidationError, ValidatorOptions } from 'class-validator';
import { passesMessageRules } from './message-check';
import { cacheValidationMetadata } from './validation-metadata-cache';

// class-transformer's registry of @Type() declarations, from the module @nestjs/mapped-types reads
// it from (its package exports no path to it with types; the types are its own).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

/** Metatypes that name no message class (a primitive, an interface, no annotation): not validated. */
const NOT_VALIDATED: unknown[] = [String, Boolean, Number, Array, Object, Buffer, Date];

/** Keys no payload may set on a message instance: they would change what the instance is. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  validationError: { target: false, value: false },
};

export type Class = new (...args: never[]) => object;

/**
 * The pipe every microservice installs globally: unknown properties are refused (not silently
 * dropped), payloads become instances of their message class, and a failure is a
 * `validation_failed` DomainError whose details name each field by its dotted path
 * (`address.street`, `items.0.name`).
 *
 * The rules are the message classes' class-validator decorators, as for Nest's ValidationPipe, but
 * the payload is not copied through class-transformer first: a payload arrives as freshly parsed
 * JSON, so it only needs the class prototype on each object that a `@ValidateNested()` /
 * `@Type()` pair declares, and every free-form value (an event's payload, a webhook's data) can stay
 * as it is instead of being copied key by key. Validation is synchronous (no message class has an
 * asynchronous rule). On the relay's batches to the audit trail this is several times cheaper than
 * the ValidationPipe (docs/performance.md, eighth session).
 */
export function createRpcValidationPipe(): PipeTransform {
  cacheValidationMetadata();
  return new RpcValidationPipe();
}

class RpcValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { metatype, type } = metadata;
    if (type === 'custom' || !metatype || NOT_VALIDATED.includes(metatype)) return value;
    const payload = value === undefined || value === null ? {} : value;
    if (!isPlainObject(payload)) {
      throw failed([{ field: metadata.data || 'payload', reason: 'an object is expected' }]);
    }
    const checked = checkAsMessage(metatype as Class, payload);
    if ('issues' in checked) throw failed(checked.issues);
    return checked.instance;
  }
}

/**
 * A parsed JSON object checked against a message class's class-validator rules, as the RPC pipe
 * does (whitelist, unknown properties refused): the instance, or the issues by dotted field path.
 * The gateway's edge pipe uses it for request bodies whose DTOs need nothing else of
 * class-transformer (see `buildsOnlyInstances`).
 */
export function checkAsMessage(type: Class, payload: Record<string, unknown>): { instance: object } | { issues: FieldIssue[] } {
  const forbidden: FieldIssue[] = [];
  const instance = instantiate(type, payload, '', forbidden);
  if (forbidden.length > 0) return { issues: forbidden };
  // Nearly every message is valid: that is decided by the same rules without the executor's
  // bookkeeping, and only a message not known to pass goes through validateSync for its errors.
  if (passesMessageRules(instance)) return { instance };
  const errors = validateSync(instance, VALIDATOR_OPTIONS);
  return errors.length > 0 ? { issues: toFieldIssues(errors) } : { instance };
}

const onlyInstances = new WeakMap<Class, boolean>();

/**
 * Whether class-transformer would do nothing for this class but build instances of the nested
 * classes it declares: no `@Transform()`, `@Expose()` or `@Exclude()`, and no `@Type()` that
 * converts a value (to a number, a date…) rather than naming a nested message class; the same for
 * every nested class. Only the properties with validation rules count: with the whitelist, any
 * other property is refused anyway. Final once the class is defined.
 */
export function buildsOnlyInstances(type: Class): boolean {
  let answer = onlyInstances.get(type);
  if (answer === undefined) {
    onlyInstances.set(type, true); // a class that nests itself: assumed, then checked below
    const nested = new Map(nestedProperties(type));
    const properties = new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).map((rule) => rule.propertyName));
    answer =
      defaultMetadataStorage.getExposedMetadatas(type).length === 0 &&
      defaultMetadataStorage.getExcludedMetadatas(type).length === 0 &&
      [...properties].every(
        (property) =>
          defaultMetadataStorage.findTransformMetadatas(type, property, TransformationType.PLAIN_TO_CLASS).length === 0 &&
          (nested.has(property) || !defaultMetadataStorage.findTypeMetadata(type, property)),
      ) &&
      [...nested.values()].every((nestedType) => buildsOnlyInstances(nestedType));
    onlyInstances.set(type, answer);
  }
  return answer;
}

function failed(issues: FieldIssue[]): DomainError {
  return new DomainError('validation_failed', 'The message did not pass validation', issues);
}

/** Flattens class-validator's error tree into one issue per failing field. */
/**
 * The constraints that say what a value must be at all: when one of them fails, the others (a
 * length, a size, a range) say nothing of the value given, so the reason names only the type
 * (`records: {}` "must be an array", not also "must contain at least 1 elements").
 */
const TYPE_CONSTRAINTS = new Set(['isDefined', 'isArray', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'nestedValidation']);

export function toFieldIssues(errors: ValidationError[], parentPath = ''): FieldIssue[] {
  return errors.flatMap((error) => {
    const field = [parentPath, error.property].filter((part) => part !== undefined && part !== '').join('.');
    const constraints = Object.entries(error.constraints ?? {});
    const typeOnly = constraints.filter(([name]) => TYPE_CONSTRAINTS.has(name));
    const reasons = (typeOnly.length > 0 ? typeOnly : constraints).map(([, reason]) => reason);
    const own = reasons.length > 0 ? [{ field, reason: reasons.join('; ') }] : [];
    return [...own, ...toFieldIssues(error.children ?? [], field)];
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The payload as an instance of `type`: its own properties copied onto a new instance, and each
 * property the class declares as nested (`@ValidateNested()` with `@Type(() => Class)`) made an
 * instance of that class in turn, one by one for an array. Anything else is left for class-validator
 * to judge (a nested property that is not an object fails its `@ValidateNested()`).
 */
function instantiate(type: Class, payload: Record<string, unknown>, path: string, forbidden: FieldIssue[]): object {
  const instance = Object.create(type.prototype) as Record<string, unknown>;
  for (const key of Object.keys(payload)) {
    if (FORBIDDEN_KEYS.has(key)) forbidden.push({ field: path + key, reason: `property ${key} should not exist` });
    else instance[key] = payload[key];
  }
  for (const [property, nestedType] of nestedProperties(type)) {
    const value = instance[property];
    if (Array.isArray(value)) {
      instance[property] = value.map((item, index) => (isPlainObject(item) ? instantiate(nestedType, item, `${path}${property}.${index}.`, forbidden) : item));
    } else if (isPlainObject(value)) {
      instance[property] = instantiate(nestedType, value, `${path}${property}.`, forbidden);
    }
  }
  return instance;
}

const nestedByClass = new WeakMap<Class, Array<[string, Class]>>();

/** The properties of a message class declared as nested, with their classes; final once the class is defined. */
function nestedProperties(type: Class): Array<[string, Class]> {
  let nested = nestedByClass.get(type);
  if (!nested) {
    nested = [];
    const seen = new Set<string>();
    for (const rule of getMetadataStorage().getTargetValidationMetadatas(type, '', true, false)) {
      if (rule.type !== 'nestedValidation' || seen.has(rule.propertyName)) continue;
      seen.add(rule.propertyName);
      const declared = defaultMetadataStorage.findTypeMetadata(type, rule.propertyName);
      const nestedType = declared?.typeFunction() as Class | undefined;
      if (typeof nestedType !== 'function') {
        throw new Error(`${type.name}.${rule.propertyName} is @ValidateNested() without @Type(() => Class): its payload could not be checked`);
      }
      nested.push([rule.propertyName, nestedType]);
    }
    nestedByClass.set(type, nested);
  }
  return nested;
}
