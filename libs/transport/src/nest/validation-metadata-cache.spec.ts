import { getMetadataStorage, IsInt, IsString, Min, validateSync, ValidateNested } from 'class-validator';
import { Type, plainToInstance } from 'class-transformer';
import { cacheValidationMetadata } from './validation-metadata-cache';

class Base {
  @IsString()
  id!: string;
}

class Line {
  @IsInt()
  @Min(1)
  quantity!: number;
}

class Order extends Base {
  @ValidateNested({ each: true })
  @Type(() => Line)
  lines!: Line[];
}

const failures = (value: unknown) =>
  validateSync(plainToInstance(Order, value), { whitelist: true, forbidNonWhitelisted: true })
    .map((error) => [error.property, error.children?.length ?? 0, Object.keys(error.constraints ?? {})])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

describe('cacheValidationMetadata', () => {
  const cases = [
    { id: 'o-1', lines: [{ quantity: 2 }] },
    { id: 7, lines: [{ quantity: 0 }, { quantity: 'x' }] },
    { id: 'o-2', lines: [{ quantity: 1, price: 3 }], extra: true },
  ];

  it('answers every validation as before, inherited and nested rules included, and looks each class up once', () => {
    const before = cases.map(failures);
    expect(before[0]).toEqual([]);
    expect(before[1]).toEqual([['id', 0, ['isString']], ['lines', 2, []]]);
    expect(before[2]).toEqual([['extra', 0, ['whitelistValidation']], ['lines', 1, []]]);

    const storage = getMetadataStorage();
    const original = storage.getTargetValidationMetadatas.bind(storage);
    const looked: Function[] = [];
    // The uncached lookup, counted: the cache must call it once per class and option set.
    (storage as unknown as { getTargetValidationMetadatas: typeof original }).getTargetValidationMetadatas = (target, ...rest) => {
      looked.push(target);
      return original(target, ...rest);
    };
    cacheValidationMetadata();
    cacheValidationMetadata(); // installing twice changes nothing

    for (let round = 0; round < 3; round += 1) expect(cases.map(failures)).toEqual(before);
    expect(looked.filter((target) => target === Order)).toHaveLength(1);
    expect(looked.filter((target) => target === Line)).toHaveLength(1);
  });
});
