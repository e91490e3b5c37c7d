import { DomainError } from '@dcr/domain';
import { Expose, Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsObject, IsString, ValidateNested } from 'class-validator';
import type { ArgumentMetadata } from '@nestjs/common';
import { buildsOnlyInstances, createRpcValidationPipe } from './rpc-validation.pipe';

class PurposeDto {
  @IsBoolean()
  marketing: boolean;
}

class LineDto {
  @IsString()
  name: string;
}

class DecisionDto {
  @ValidateNested()
  @Type(() => PurposeDto)
  decisions: PurposeDto;

  @ValidateNested({ each: true })
  @Type(() => LineDto)
  lines: LineDto[];
}

class EventDto {
  @IsString()
  type: string;

  /** Free-form: any JSON object. */
  @IsObject()
  payload: Record<string, unknown>;
}

class UntypedNestedDto {
  @ValidateNested()
  inner: LineDto;
}

async function issuesFor(value: unknown, metatype: ArgumentMetadata['metatype'] = DecisionDto) {
  try {
    await createRpcValidationPipe().transform(value, { type: 'body', metatype });
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return (error as DomainError).details;
  }
  throw new Error('Expected validation to fail');
}

describe('createRpcValidationPipe', () => {
  it('names nested fields by their dotted path, with every failed constraint as the reason', async () => {
    const details = await issuesFor({ decisions: { marketing: 'yes' }, lines: [{ name: 'a' }, { name: 7 }] });
    expect(details).toEqual([
      { field: 'decisions.marketing', reason: 'marketing must be a boolean value' },
      { field: 'lines.1.name', reason: 'name must be a string' },
    ]);
  });

  it('refuses properties the DTO does not declare, at any depth', async () => {
    const details = await issuesFor({ decisions: { marketing: true, sneaky: 1 }, lines: [], extra: 1 });
    expect(details?.map((issue) => issue.field).sort()).toEqual(['decisions.sneaky', 'extra']);
  });

  it('returns a DTO instance for a valid payload', async () => {
    const value = await createRpcValidationPipe().transform(
      { decisions: { marketing: false }, lines: [{ name: 'a' }] },
      { type: 'body', metatype: DecisionDto },
    );
    expect(value).toBeInstanceOf(DecisionDto);
    expect(value.decisions).toBeInstanceOf(PurposeDto);
  });

  it('keeps free-form values as they came, whatever their keys, and builds instances only where a class is declared', async () => {
    const payload = { deep: { list: [1, { a: null }], 'odd key': true } };
    const value = await createRpcValidationPipe().transform({ type: 'consent.recorded', payload }, { type: 'body', metatype: EventDto });
    expect(value).toBeInstanceOf(EventDto);
    expect(value.payload).toEqual(payload);
    expect(Object.getPrototypeOf(value.payload)).toBe(Object.prototype);
    const nested = await createRpcValidationPipe().transform({ decisions: { marketing: true }, lines: [{ name: 'a' }, { name: 'b' }] }, { type: 'body', metatype: DecisionDto });
    expect(nested.lines.map((line: unknown) => line instanceof LineDto)).toEqual([true, true]);
  });

  it('refuses a payload that is not an object, and judges a missing one as empty', async () => {
    expect(await issuesFor([{ decisions: { marketing: true } }])).toEqual([{ field: 'payload', reason: 'an object is expected' }]);
    expect(await issuesFor('text')).toEqual([{ field: 'payload', reason: 'an object is expected' }]);
    expect((await issuesFor(null, EventDto))?.map((issue) => issue.field)).toEqual(['type', 'payload']);
    // A nested value that is not an object fails its @ValidateNested().
    expect((await issuesFor({ decisions: 'yes', lines: [] }))?.map((issue) => issue.field)).toEqual(['decisions']);
  });

  it('refuses __proto__ and constructor keys on a message, which would change what the instance is', async () => {
    const parsed = JSON.parse('{"decisions": {"marketing": true, "__proto__": {"polluted": true}}, "lines": [], "constructor": "x"}');
    expect(await issuesFor(parsed)).toEqual([
      { field: 'constructor', reason: 'property constructor should not exist' },
      { field: 'decisions.__proto__', reason: 'property __proto__ should not exist' },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('passes through what names no message class, and refuses to guess an undeclared nested class', async () => {
    const pipe = createRpcValidationPipe();
    const anything = { any: 'thing' };
    expect(pipe.transform(anything, { type: 'body', metatype: Object })).toBe(anything);
    expect(pipe.transform(anything, { type: 'body' })).toBe(anything);
    expect(() => pipe.transform({ inner: { name: 'a' } }, { type: 'body', metatype: UntypedNestedDto })).toThrow('without @Type(() => Class)');
  });

  it('tells which classes class-transformer would do nothing for but build nested instances', () => {
    class Converted {
      @IsInt()
      @Type(() => Number)
      limit: number;
    }
    class Transformed {
      @IsString()
      @Transform(({ value }) => String(value).trim())
      name: string;
    }
    class Exposed {
      @IsString()
      @Expose({ name: 'full_name' })
      name: string;
    }
    class HoldsExposed {
      @ValidateNested()
      @Type(() => Exposed)
      inner: Exposed;
    }
    expect([DecisionDto, EventDto, PurposeDto].map(buildsOnlyInstances)).toEqual([true, true, true]);
    expect([Converted, Transformed, Exposed, HoldsExposed].map(buildsOnlyInstances)).toEqual([false, false, false, false]);
  });
});
