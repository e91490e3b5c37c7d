import 'reflect-metadata';
import { DomainError } from '@dcr/domain';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { EdgeValidationPipe } from './validation.pipe';

class TokenQuery {
  @IsString()
  @Length(1, 20)
  consent_token: string;
}

class PagingQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

class FlavorQuery {
  @IsOptional()
  @IsIn(['canonical', 'dpv'], { message: 'flavor must be one of canonical, dpv' })
  flavor?: string;

  @IsOptional()
  @IsString()
  limit?: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  type?: string[];
}

class NameBody {
  @IsString()
  name: string;
}

const pipe = new EdgeValidationPipe();
const query = (metatype: new () => object) => ({ type: 'query' as const, metatype, data: undefined });
const body = (metatype: new () => object) => ({ type: 'body' as const, metatype, data: undefined });

async function refusal(work: Promise<unknown>): Promise<DomainError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe('EdgeValidationPipe', () => {
  it('answers a query without conversions as an instance of its DTO', async () => {
    const checked = await pipe.transform({ consent_token: 'abc' }, query(TokenQuery));
    expect(checked).toBeInstanceOf(TokenQuery);
    expect(checked).toEqual({ consent_token: 'abc' });
  });

  it('refuses a bad, missing, repeated or unknown query parameter with invalid_request naming it', async () => {
    const tooLong = await refusal(pipe.transform({ consent_token: 'x'.repeat(21) }, query(TokenQuery)));
    expect(tooLong.code).toBe('invalid_request');
    expect(tooLong.message).toBe('Invalid query parameters');
    expect(tooLong.details).toEqual([expect.objectContaining({ field: 'consent_token' })]);

    const missing = await refusal(pipe.transform({}, query(TokenQuery)));
    expect(missing.details).toEqual([expect.objectContaining({ field: 'consent_token' })]);

    const repeated = await refusal(pipe.transform({ consent_token: ['a', 'b'] }, query(TokenQuery)));
    expect(repeated.details).toEqual([expect.objectContaining({ field: 'consent_token' })]);

    const unknown = await refusal(pipe.transform({ consent_token: 'abc', colour: 'red' }, query(TokenQuery)));
    expect(unknown.code).toBe('invalid_request');
    expect(unknown.details).toEqual([expect.objectContaining({ field: 'colour' })]);
  });

  it('refuses a parameter given twice that its DTO takes once as "must be given once", beside the other problems, and takes a list parameter repeated', async () => {
    // It was "flavor must be one of …" and "limit must be a string": true of neither value given.
    const twice = await refusal(pipe.transform({ flavor: ['canonical', 'dpv'], limit: ['1', '2'] }, query(FlavorQuery)));
    expect([twice.code, twice.message, twice.details]).toEqual([
      'invalid_request',
      'Invalid query parameters',
      [
        { field: 'flavor', reason: 'must be given once' },
        { field: 'limit', reason: 'must be given once' },
      ],
    ]);
    const withOthers = await refusal(pipe.transform({ flavor: 'nope', limit: ['1', '2'], colour: 'red' }, query(FlavorQuery)));
    expect(withOthers.details).toEqual([
      { field: 'limit', reason: 'must be given once' },
      { field: 'colour', reason: 'property colour should not exist' },
      { field: 'flavor', reason: 'flavor must be one of canonical, dpv' },
    ]);
    // A required parameter given twice is named once, as repeated, not as missing too.
    expect((await refusal(pipe.transform({ consent_token: ['a', 'b'] }, query(TokenQuery)))).details).toEqual([{ field: 'consent_token', reason: 'must be given once' }]);
    // Through the converting path too.
    expect((await refusal(pipe.transform({ limit: ['1', '2'] }, query(PagingQuery)))).details).toEqual([{ field: 'limit', reason: 'must be given once' }]);
    // A parameter the DTO takes as a list may be repeated; one it does not know is refused as unknown, repeated or not.
    expect(await pipe.transform({ type: ['a.b', 'c.d'] }, query(FlavorQuery))).toEqual({ type: ['a.b', 'c.d'] });
    expect((await refusal(pipe.transform({ colour: ['red', 'blue'] }, query(FlavorQuery)))).details).toEqual([{ field: 'colour', reason: 'property colour should not exist' }]);
  });

  it('still converts a query whose DTO declares a conversion, and refuses what does not convert', async () => {
    const plainToInstance = jest.spyOn(jest.requireActual('class-transformer'), 'plainToInstance');
    const checked = await pipe.transform({ limit: '20' }, query(PagingQuery));
    expect(plainToInstance).toHaveBeenCalled();
    plainToInstance.mockRestore();
    expect(checked).toBeInstanceOf(PagingQuery);
    expect((checked as PagingQuery).limit).toBe(20);

    const tooMany = await refusal(pipe.transform({ limit: '500' }, query(PagingQuery)));
    expect(tooMany.code).toBe('invalid_request');
    expect(tooMany.details).toEqual([expect.objectContaining({ field: 'limit' })]);
  });

  it('answers a body that breaks its DTO with validation_failed, and one that is not an object with invalid_request', async () => {
    const broken = await refusal(pipe.transform({ name: 3 }, body(NameBody)));
    expect(broken.code).toBe('validation_failed');
    expect(broken.details).toEqual([expect.objectContaining({ field: 'name' })]);

    const notAnObject = await refusal(pipe.transform([1, 2], body(NameBody)));
    expect(notAnObject.code).toBe('invalid_request');
  });

  it('refuses a body with text the database cannot keep (U+0000, an unpaired surrogate) naming the field, whatever its DTO', async () => {
    const nul = await refusal(pipe.transform({ name: 'Ada\u0000' }, body(NameBody)));
    expect([nul.code, nul.details]).toEqual(['validation_failed', [{ field: 'name', reason: 'must not contain the character U+0000' }]]);
    const untyped = await refusal(pipe.transform({ steps: [{ title: '\ud800' }] }, { type: 'body', metatype: Object, data: undefined }));
    expect([untyped.code, untyped.details?.map((issue) => issue.field)]).toEqual(['validation_failed', ['steps[0].title']]);
    // A text/plain body, or a form's (the inbox pages answer it in HTML), is its route's own to read.
    expect(await pipe.transform('plain\u0000', { type: 'body', metatype: String, data: undefined })).toBe('plain\u0000');
    const form = parsedQuery([['email', 'ada\u0000@example.com']]);
    expect(await pipe.transform(form, { type: 'body', metatype: Object, data: undefined })).toBe(form);
  });
});

/** A query as Fastify's router parses it (fast-querystring): its prototype is an empty object without a prototype. */
function parsedQuery(entries: Array<[string, string]>): Record<string, unknown> {
  function Empty() {}
  Empty.prototype = Object.create(null);
  const parsed = new (Empty as unknown as new () => Record<string, unknown>)();
  for (const [key, value] of entries) Object.defineProperty(parsed, key, { value, enumerable: true, writable: true, configurable: true });
  return parsed;
}

describe('EdgeValidationPipe on the query objects Fastify parses', () => {
  it('checks them without class-transformer, and refuses __proto__ and constructor keys', async () => {
    const plainToInstance = jest.spyOn(jest.requireActual('class-transformer'), 'plainToInstance');
    try {
      const checked = await pipe.transform(parsedQuery([['consent_token', 'abc']]), query(TokenQuery));
      expect(checked).toBeInstanceOf(TokenQuery);
      expect(checked).toEqual({ consent_token: 'abc' });
      expect(plainToInstance).not.toHaveBeenCalled();
    } finally {
      plainToInstance.mockRestore();
    }
    const forbidden = await refusal(pipe.transform(parsedQuery([['consent_token', 'abc'], ['__proto__', 'x'], ['constructor', 'y']]), query(TokenQuery)));
    expect(forbidden.code).toBe('invalid_request');
    expect(forbidden.details?.map((issue) => issue.field).sort()).toEqual(['__proto__', 'constructor']);
  });
});
