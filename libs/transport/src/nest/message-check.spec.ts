import 'reflect-metadata';
import * as fc from 'fast-check';
import { plainToInstance, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  registerDecorator,
  ValidateIf,
  ValidateNested,
  validateSync,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  Validate,
  getMetadataStorage,
} from 'class-validator';
import { passesMessageRules } from './message-check';
import { checkAsMessage } from './rpc-validation.pipe';

const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, validationError: { target: false, value: false } };

class Line {
  @IsString() @Length(1, 8) name: string;
  @IsOptional() @IsInt() @Min(0) @Max(10) count?: number;
}

class Base {
  @IsString() @Matches(/^app_[a-z0-9]+$/) application_id: string;
}

function IsEven() {
  return (object: object, propertyName: string) =>
    registerDecorator({ name: 'isEven', target: object.constructor, propertyName, validator: { validate: (value: unknown) => typeof value === 'number' && value % 2 === 0 } });
}

@ValidatorConstraint({ name: 'startsWithX', async: false })
class StartsWithX implements ValidatorConstraintInterface {
  validate(value: unknown) {
    return typeof value === 'string' && value.startsWith('x');
  }
}

@ValidatorConstraint({ name: 'neverAsync', async: true })
class NeverAsync implements ValidatorConstraintInterface {
  validate() {
    return Promise.resolve(false);
  }
}

class Message extends Base {
  @IsIn(['consent', 'approval']) kind: string;
  @IsOptional() @IsEmail() email?: string;
  @IsOptional() @IsISO8601() at?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(3) @IsString({ each: true }) tags?: string[];
  @IsOptional() @ValidateNested({ each: true }) @Type(() => Line) lines?: Line[];
  @IsOptional() @ValidateNested() @Type(() => Line) first?: Line;
  @ValidateIf((object: Message) => object.kind === 'approval') @IsString() approver?: string;
  @IsOptional() @IsObject() data?: Record<string, unknown>;
  @IsOptional() @IsBoolean({ validateIf: (object: Message) => object.kind === 'consent' }) flag?: unknown;
  @IsOptional() @IsEven() even?: number;
  @IsOptional() @Validate(StartsWithX) x?: string;
  // An asynchronous constraint: validateSync skips it, and so does the check.
  @IsOptional() @Validate(NeverAsync) later?: unknown;
  @Allow() free?: unknown;
}

class Required {
  @IsDefined() id: unknown;
}

/** Values of every JSON kind, shaped to hit the rules above on both sides of each. */
const value = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    '',
    'a',
    'abcdefghij',
    'consent',
    'approval',
    'app_abc1',
    'APP_1',
    'someone@example.com',
    'not-an-email',
    '2026-11-23T08:00:00Z',
    '2026-13-45',
    'xylophone',
    0,
    2,
    3,
    11,
    -1,
    1.5,
    true,
    false,
    [],
    ['a'],
    ['a', 'b', 'c', 'd'],
    [1],
    {},
    { name: 'ok' },
    { name: 'ok', count: 3 },
    { name: 'ok', count: 30 },
    { name: 'ok', extra: 1 },
    [{ name: 'ok' }],
    [{ name: 'ok' }, { name: 7 }],
    [null],
    [[{ name: 'ok' }]],
  ),
  fc.string(),
  fc.integer(),
);

const keys = ['application_id', 'kind', 'email', 'at', 'tags', 'lines', 'first', 'approver', 'data', 'flag', 'even', 'x', 'later', 'free', 'unknown'];

const payload = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length });

class Stamped {
  @IsISO8601({ strict: true }) at: string;
  @IsOptional() @IsISO8601() loose?: string;
  @IsOptional() @IsEmail() email?: string;
  @IsOptional() @IsEmail({ require_tld: false }) local_email?: string;
  @IsOptional() @IsISO8601({ strict: true }, { each: true }) times?: string[];
}

function verdicts(type: new () => object, plain: Record<string, unknown>) {
  const instance = plainToInstance(type, plain) as object;
  return { check: passesMessageRules(instance), validateSync: validateSync(instance, OPTIONS).length === 0 };
}

describe('passesMessageRules', () => {
  it('passes exactly the objects validateSync finds no error in (whitelist, nested, each, conditions, custom constraints)', () => {
    fc.assert(
      fc.property(payload, (plain) => {
        const { check, validateSync: valid } = verdicts(Message, plain);
        expect(check).toBe(valid);
      }),
      { numRuns: 3000 },
    );
  });

  it('passes a fully valid message, and fails each single fault in it', () => {
    const valid = {
      application_id: 'app_abc1',
      kind: 'approval',
      approver: 'a person',
      tags: ['a', 'b'],
      lines: [{ name: 'one', count: 2 }],
      first: { name: 'two' },
      even: 4,
      x: 'xyz',
      later: 'anything',
      free: { any: 'thing' },
    };
    expect(verdicts(Message, valid)).toEqual({ check: true, validateSync: true });
    for (const fault of [
      { unknown: 1 },
      { approver: 7 },
      { kind: 'other' },
      { tags: ['a', 1] },
      { lines: [{ name: 'one', count: 11 }] },
      { lines: [{ name: 'one', extra: true }] },
      { first: 'two' },
      { first: { name: 7 } },
      { even: 3 },
      { x: 'yz' },
      { application_id: 'APP' },
    ]) {
      expect({ fault, ...verdicts(Message, { ...valid, ...fault }) }).toEqual({ fault, check: false, validateSync: false });
    }
  });

  it('skips a property whose condition is false, as validateSync does', () => {
    expect(verdicts(Message, { application_id: 'app_a', kind: 'consent', approver: 7 })).toEqual({ check: true, validateSync: true });
    expect(verdicts(Message, { application_id: 'app_a', kind: 'approval', approver: 'p', flag: 'not a boolean' })).toEqual({ check: true, validateSync: true });
    expect(verdicts(Message, { application_id: 'app_a', kind: 'consent', flag: 'not a boolean' })).toEqual({ check: false, validateSync: false });
  });

  it('leaves to validateSync what it does not follow: a class without rules, a Set', () => {
    class NoRules {}
    expect(passesMessageRules(new NoRules())).toBe(false);
    expect(validateSync(new NoRules(), OPTIONS)).toHaveLength(1); // the executor's "unknown value"
    const withSet = plainToInstance(Message, { application_id: 'app_a', kind: 'consent' });
    withSet.tags = new Set(['a']) as unknown as string[];
    expect(passesMessageRules(withSet)).toBe(false);
  });

  it('answers as validateSync for time stamps and addresses, whether or not their quick acceptance takes them', () => {
    const cases: Array<[Record<string, unknown>, boolean]> = [
      // Taken by the quick acceptances (quick-accepts.ts).
      [{ at: '2026-11-24T13:23:29.593Z', email: 'person-1@example.com', times: ['2026-11-24T13:23:29+02:00'] }, true],
      // Left to validator.js, which accepts them.
      [{ at: '2026-11-24', loose: '2026-W48-2', email: '"quoted person"@example.com', local_email: 'root@localhost' }, true],
      [{ at: '2026-11-24T13:23:29.593Z', times: ['2026-11-24T13:23:29.593Z', '2026-329'] }, true],
      // Refused by both.
      [{ at: '2026-02-30T00:00:00Z' }, false],
      [{ at: '0050-01-01T00:00:00Z' }, false],
      [{ at: '2026-11-24T13:23:29.593Z', email: 'person@localhost' }, false],
      [{ at: '2026-11-24T13:23:29.593Z', times: ['2026-11-24T13:23:29.593Z', 'yesterday'] }, false],
      [{ at: 20261124 }, false],
    ];
    for (const [plain, valid] of cases) expect(verdicts(Stamped, plain)).toEqual({ check: valid, validateSync: valid });
  });

  it('needs @IsDefined() properties present', () => {
    expect(verdicts(Required, {})).toEqual({ check: false, validateSync: false });
    expect(verdicts(Required, { id: 0 })).toEqual({ check: true, validateSync: true });
  });

  it('agrees with validateSync on every message class of the process, for arbitrary payloads', async () => {
    await import('@dcr/contracts');
    const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Function, unknown[]> };
    const classes = [...storage.validationMetadatas.keys()].filter((type) => typeof type === 'function' && type.prototype);
    expect(classes.length).toBeGreaterThan(50);
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    let passed = 0;
    for (const type of classes) {
      const names = [...new Set((getMetadataStorage().getTargetValidationMetadatas(type, '', false, false) as Array<{ propertyName: string }>).map((rule) => rule.propertyName))];
      if (names.length === 0) continue;
      const plain = fc.dictionary(fc.constantFrom(...names, 'unknown_property'), fc.oneof(value, anyJson as fc.Arbitrary<unknown>), { maxKeys: names.length + 1 });
      fc.assert(
        fc.property(plain, (object) => {
          const instance = plainToInstance(type as new () => object, object) as object;
          const valid = validateSync(instance, OPTIONS).length === 0;
          // Sound: never passes what validateSync refuses (a false pass would let a bad message in).
          if (passesMessageRules(instance)) {
            expect(valid).toBe(true);
            passed++;
          }
        }),
        { numRuns: 40 },
      );
    }
    // Most arbitrary payloads are invalid; some (optional-only classes, empty objects) must pass.
    expect(passed).toBeGreaterThan(0);
  });

  it('is what checkAsMessage answers with: the instance when it passes, class-validator\'s issues when not', () => {
    expect(checkAsMessage(Message, { application_id: 'app_a', kind: 'consent', lines: [{ name: 'a' }] })).toEqual({ instance: expect.any(Message) });
    expect(checkAsMessage(Message, { application_id: 'app_a', kind: 'consent', lines: [{ name: 'much too long' }] })).toEqual({
      issues: [{ field: 'lines.0.name', reason: 'name must be shorter than or equal to 8 characters' }],
    });
    expect(checkAsMessage(Message, { application_id: 'app_a', kind: 'consent', lines: [{ name: 7 }] })).toEqual({
      // A value of the wrong type is named by its type alone: its length says nothing of a number.
      issues: [{ field: 'lines.0.name', reason: 'name must be a string' }],
    });
  });
});
