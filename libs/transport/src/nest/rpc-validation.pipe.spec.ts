import { DomainError } from '@dcr/domain';
import { Type } from 'class-transformer';
import { IsBoolean, IsString, ValidateNested } from 'class-validator';
import { createRpcValidationPipe } from './rpc-validation.pipe';

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

async function issuesFor(value: unknown) {
  try {
    await createRpcValidationPipe().transform(value, { type: 'body', metatype: DecisionDto });
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
});
