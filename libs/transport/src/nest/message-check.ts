import { getMetadataStorage, IS_EMAIL, IS_ISO8601, ValidationTypes } from 'class-validator';
import type { ValidationArguments, ValidatorConstraintInterface } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { isPlainEmail, isPlainTimestamp } from './quick-accepts';

interface RuleCheck {
  metadata: ValidationMetadata;
  constraints: ValidatorConstraintInterface[];
}

interface PropertyCheck {
  name: string;
  conditions: Array<(object: object, value: unknown) => boolean>;
  rules: RuleCheck[];
  nested: boolean;
}

interface ClassCheck {
  allowed: Set<string>;
  properties: PropertyCheck[];
}

type Storage = {
  getTargetValidationMetadatas(target: Function, schema: string, always: boolean, strict: boolean, groups?: string[]): ValidationMetadata[];
  getTargetValidatorConstraints(target: Function): Array<{ instance: ValidatorConstraintInterface; async: boolean }>;
};

/** A class's plan, or null when it uses something the check does not follow (validateSync decides). */
const plans = new WeakMap<Function, ClassCheck | null>();

const FOLLOWED = new Set<string>([
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.IS_DEFINED,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.NESTED_VALIDATION,
  ValidationTypes.WHITELIST,
]);

function planOf(type: Function): ClassCheck | null {
  let plan = plans.get(type);
  if (plan !== undefined) return plan;
  plan = buildPlan(type);
  plans.set(type, plan);
  return plan;
}

function buildPlan(type: Function): ClassCheck | null {
  const storage = getMetadataStorage() as unknown as Storage;
  // The same lookup as validateSync's executor with no groups and `always` off.
  const metadata = storage.getTargetValidationMetadatas(type, '', false, false, undefined);
  // No rules at all is the executor's "unknown value" error: left to it.
  if (metadata.length === 0) return null;
  if (metadata.some((rule) => !FOLLOWED.has(rule.type))) return null;
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const rule of metadata) {
    const list = byProperty.get(rule.propertyName);
    if (list) list.push(rule);
    else byProperty.set(rule.propertyName, [rule]);
  }
  const properties: PropertyCheck[] = [];
  for (const [name, rules] of byProperty) {
    const ruleChecks = (kind: string): RuleCheck[] =>
      rules
        .filter((rule) => rule.type === kind)
        .map((rule) => ({
          metadata: rule,
          // validateSync skips asynchronous constraints (it sets ignoreAsyncValidations).
          constraints: storage
            .getTargetValidatorConstraints(rule.constraintCls)
            .filter((constraint) => !constraint.async)
            .map((constraint) => withQuickAccept(rule, constraint.instance)),
        }));
    properties.push({
      name,
      conditions: rules.filter((rule) => rule.type === ValidationTypes.CONDITIONAL_VALIDATION).map((rule) => rule.constraints[0] as (object: object, value: unknown) => boolean),
      // `@IsDefined()` first, then the other rules: the executor's order (the answer does not depend on it).
      rules: [...ruleChecks(ValidationTypes.IS_DEFINED), ...ruleChecks(ValidationTypes.CUSTOM_VALIDATION)],
      nested: rules.some((rule) => rule.type === ValidationTypes.NESTED_VALIDATION),
    });
  }
  return { allowed: new Set(byProperty.keys()), properties };
}

/**
 * A rule's constraint, asked only for what the rule's quick acceptance (quick-accepts.ts) does not
 * accept: `@IsISO8601()` with any options (the quick form is strict and has its `T`), and
 * `@IsEmail()` with validator.js's default options. The values accepted are the constraint's own.
 */
function withQuickAccept(rule: ValidationMetadata, constraint: ValidatorConstraintInterface): ValidatorConstraintInterface {
  const quick = rule.name === IS_ISO8601 ? isPlainTimestamp : rule.name === IS_EMAIL && rule.constraints?.[0] === undefined ? isPlainEmail : undefined;
  if (!quick) return constraint;
  return { validate: (value, args) => (typeof value === 'string' && quick(value)) || constraint.validate(value, args) };
}

/**
 * Whether an object passes its class's class-validator rules, decided without class-validator's
 * executor: true only when `validateSync(object, { whitelist: true, forbidNonWhitelisted: true })`
 * would find no error. False means "not known to pass": the caller then runs `validateSync` itself,
 * which finds the errors and words them (or, in the cases this check does not follow, such as a
 * Set, a Map or a rule that answers a promise, finds none). So the errors a caller reports are
 * always class-validator's own; only the valid case, which is nearly every message, is faster.
 *
 * The check calls the very functions class-validator would call, in the same way: each rule's
 * constraint `validate(value, args)` (every built-in decorator is such a constraint), the
 * conditions of `@IsOptional()` and `@ValidateIf()`, a rule's own `validateIf`, `each` over
 * arrays, and `@ValidateNested()` by the class of each nested object. What it leaves out is the
 * executor's bookkeeping: an error object per property and its filters and groupings on every
 * call, which made up most of a message's validation time (docs/performance.md, tenth session).
 * A class's plan (its rules by property) is built once: a class's rules are final once it is defined.
 */
export function passesMessageRules(object: object): boolean {
  const plan = planOf((object as { constructor: Function }).constructor);
  if (!plan) return false;
  // The whitelist with forbidNonWhitelisted: a property without any rule is an error.
  for (const key of Object.keys(object)) if (!plan.allowed.has(key)) return false;
  for (const property of plan.properties) {
    const value = (object as Record<string, unknown>)[property.name];
    let applies = true;
    // Every condition is evaluated, as the executor does (map, then reduce).
    for (const condition of property.conditions) applies = condition(object, value) && applies;
    if (!applies) continue;
    for (const rule of property.rules) if (!rulePasses(rule, object, value)) return false;
    if (property.nested && !nestedPasses(value)) return false;
  }
  return true;
}

function rulePasses({ metadata, constraints }: RuleCheck, object: object, value: unknown): boolean {
  if (metadata.validateIf && !metadata.validateIf(object, value)) return true;
  if (constraints.length === 0) return true;
  const args: ValidationArguments = {
    targetName: (object as { constructor?: Function }).constructor ? (object as { constructor: Function }).constructor.name : (undefined as unknown as string),
    property: metadata.propertyName,
    object,
    value,
    constraints: metadata.constraints,
  };
  if (value instanceof Set || value instanceof Map) return false; // converted by the executor: left to it
  const each = metadata.each && Array.isArray(value);
  for (const constraint of constraints) {
    if (each) {
      for (const item of value as unknown[]) if (!isTrue(constraint.validate(item, args))) return false;
    } else if (!isTrue(constraint.validate(value, args))) {
      return false;
    }
  }
  return true;
}

/** A constraint's answer: a promise is not followed (validateSync decides). */
function isTrue(answer: unknown): boolean {
  if (answer !== null && typeof answer === 'object' && typeof (answer as { then?: unknown }).then === 'function') return false;
  return Boolean(answer);
}

/** `@ValidateNested()`: undefined passes, an array's items each as a nested value, an object by its own class. */
function nestedPasses(value: unknown): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (!nestedPasses(item)) return false;
    return true;
  }
  if (value instanceof Set || value instanceof Map) return false;
  if (value instanceof Object) return passesMessageRules(value);
  return false;
}
