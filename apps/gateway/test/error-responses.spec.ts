import { Controller, Get, Module, Post, Body } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DomainError } from '@dcr/domain';
import { Type } from 'class-transformer';
import { IsEmail, IsInt } from 'class-validator';
import pino from 'pino';
import request from 'supertest';
import { AllExceptionsFilter } from '../src/http/all-exceptions.filter';
import { useFormBodyParser } from '../src/http/form-body';
import { useJsonBodyParser } from '../src/http/json-body';
import { EdgeValidationPipe } from '../src/http/validation.pipe';

class SignInDto {
  @IsEmail()
  email: string;
}

class PageDto {
  @IsInt()
  @Type(() => Number)
  limit: number;
}

@Controller('probe')
class ProbeController {
  @Get('crash')
  crash(): never {
    throw new Error('database password is hunter2 at /srv/secret.ts:12');
  }

  @Get('unavailable')
  unavailable(): never {
    throw new DomainError('service_unavailable', 'No decisions service answered');
  }

  @Get('wrong-country')
  wrongCountry(): never {
    throw new DomainError('wrong_country', 'Served from DE', undefined, { home_country: 'DE' });
  }

  @Post('sign-in')
  signIn(@Body() body: SignInDto) {
    return { email: body.email, is_dto: body instanceof SignInDto };
  }

  @Post('form')
  form(@Body() body: Record<string, unknown>) {
    return { ...body };
  }

  @Post('page')
  page(@Body() body: PageDto) {
    return { limit: body.limit, is_dto: body instanceof PageDto };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

/** The error contract at the HTTP edge: exact statuses and bodies, and never a stack. */
describe('gateway error responses', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter({ bodyLimit: 1024 }), { logger: false });
    useJsonBodyParser(app);
    useFormBodyParser(app);
    app.useGlobalPipes(new EdgeValidationPipe());
    app.useGlobalFilters(new AllExceptionsFilter(pino({ level: 'silent' })));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers an unexpected error with 500, a request id and nothing of the error', async () => {
    const response = await request(app.getHttpServer()).get('/probe/crash');
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ message: 'Internal server error', code: 'internal_error', request_id: expect.any(String) });
    expect(response.text).not.toMatch(/hunter2|secret\.ts|at /);
  });

  it('maps domain codes to their statuses', async () => {
    expect((await request(app.getHttpServer()).get('/probe/unavailable')).status).toBe(503);
    const wrong = await request(app.getHttpServer()).get('/probe/wrong-country');
    expect(wrong.status).toBe(421);
    expect(wrong.body).toEqual({ message: 'Served from DE', code: 'wrong_country', home_country: 'DE', request_id: expect.any(String) });
  });

  it('hands a valid body to the handler as its DTO, refusing fields the DTO does not declare', async () => {
    const valid = await request(app.getHttpServer()).post('/probe/sign-in').send({ email: 'ada@example.com' });
    expect(valid.body).toEqual({ email: 'ada@example.com', is_dto: true });
    const extra = await request(app.getHttpServer()).post('/probe/sign-in').send({ email: 'ada@example.com', role: 'admin' });
    expect(extra.status).toBe(422);
    expect(extra.body.details).toEqual([{ field: 'role', reason: 'property role should not exist' }]);
    // A field is named by what the caller sent: a long key is repeated only in part.
    const key = 'k'.repeat(900);
    const long = await request(app.getHttpServer()).post('/probe/sign-in').send({ email: 'ada@example.com', [key]: 1 });
    expect(long.status).toBe(422);
    expect(long.body.details).toEqual([{ field: `${'k'.repeat(800)}…`, reason: `property ${'k'.repeat(491)}…` }]);
  });

  it("still converts what a DTO's @Type() converts (those DTOs keep Nest's pipe)", async () => {
    const page = await request(app.getHttpServer()).post('/probe/page').send({ limit: '5' });
    expect(page.body).toEqual({ limit: 5, is_dto: true });
  });

  it('answers validation failures with 422 naming the field', async () => {
    const response = await request(app.getHttpServer()).post('/probe/sign-in').send({ email: 'not-an-email' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The request did not pass validation',
      code: 'validation_failed',
      details: [{ field: 'email', reason: 'email must be an email' }],
      request_id: expect.any(String),
    });
  });

  it('refuses a valid JSON body holding a prototype key with 400 naming its path, not as malformed JSON', async () => {
    const reason = 'is a prototype key (__proto__, or constructor holding prototype): not accepted';
    const post = (raw: string, type = 'application/json') => request(app.getHttpServer()).post('/probe/sign-in').set('content-type', type).send(raw);
    const proto = await post('{"email":"ada@example.com","subject":{"__proto__":{"admin":true}}}');
    expect([proto.status, proto.body]).toEqual([
      400,
      {
        message: 'The request body holds a prototype key (__proto__, or constructor holding prototype): such keys are not accepted',
        code: 'invalid_request',
        details: [{ field: 'subject.__proto__', reason }],
        request_id: expect.any(String),
      },
    ]);
    const constructor = await post('\uFEFF{"email":"ada@example.com","list":[{"constructor":{"prototype":{}}}]}', 'application/json; charset=utf-8');
    expect([constructor.status, constructor.body.details]).toEqual([400, [{ field: 'list[0].constructor.prototype', reason }]]);
    // Valid JSON without one is read as before (a BOM and a charset included), the literal null too.
    const fine = await post('\uFEFF{"email":"ada@example.com"}', 'application/json; charset=utf-8');
    expect(fine.body).toEqual({ email: 'ada@example.com', is_dto: true });
    expect((await post('null')).body.details).toEqual([{ field: 'body', reason: 'must be a JSON object' }]);
    // Malformed JSON that merely mentions such a key stays malformed.
    expect((await post('{"__proto__":')).body.code).toBe('malformed_json');
    // Other +json types are read by no route, as before.
    expect((await post('{"email":"ada@example.com"}', 'application/merge-patch+json')).status).toBe(415);
  });

  it('refuses a form body (x-www-form-urlencoded) with a prototype key as the JSON body is refused, naming the field as the form sent it', async () => {
    const reason = 'is a prototype key (__proto__, or constructor holding prototype): not accepted';
    const post = (raw: string) => request(app.getHttpServer()).post('/probe/form').set('content-type', 'application/x-www-form-urlencoded').send(raw);
    const proto = await post('email=ada%40example.com&__proto__=x');
    expect([proto.status, proto.body]).toEqual([
      400,
      {
        message: 'The request body holds a prototype key (__proto__, or constructor holding prototype): such keys are not accepted',
        code: 'invalid_request',
        details: [{ field: '__proto__', reason }],
        request_id: expect.any(String),
      },
    ]);
    // Percent-encoded, and in the bracket and dot notation forms use for nesting.
    for (const [raw, fields] of [
      ['%5F%5Fproto%5F%5F=x', ['__proto__']],
      ['constructor[prototype]=x', ['constructor[prototype]']],
      ['constructor%5Bprototype%5D%5Badmin%5D=1', ['constructor[prototype][admin]']],
      ['subject[__proto__][admin]=1&list.constructor.prototype=2', ['subject[__proto__][admin]', 'list.constructor.prototype']],
    ] as const) {
      const refused = await post(raw);
      expect([raw, refused.status, refused.body.details]).toEqual([raw, 400, fields.map((field) => ({ field, reason }))]);
    }
    // A form without one is read as before: a plain `constructor` or `prototype` field is no prototype key.
    expect((await post('email=ada%40example.com&constructor=x&prototype=y&a=1&a=2')).body).toEqual({ email: 'ada@example.com', constructor: 'x', prototype: 'y', a: ['1', '2'] });
  });

  it('answers unknown routes, bad JSON and oversized bodies in the same shape', async () => {
    const missing = await request(app.getHttpServer()).get('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('route_not_found');
    const malformed = await request(app.getHttpServer()).post('/probe/sign-in').set('content-type', 'application/json').send('{"email":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('malformed_json');
    // A 4xx about the body names it, as one about a field names the field.
    expect(malformed.body.details).toEqual([{ field: 'body', reason: 'is not valid JSON' }]);
    for (const raw of ['[]', '"x"', 'null']) {
      const notAnObject = await request(app.getHttpServer()).post('/probe/sign-in').set('content-type', 'application/json').send(raw);
      expect([raw, notAnObject.status, notAnObject.body.code, notAnObject.body.details]).toEqual([raw, 400, 'invalid_request', [{ field: 'body', reason: 'must be a JSON object' }]]);
    }
    const empty = await request(app.getHttpServer()).post('/probe/sign-in').set('content-type', 'application/json').send('');
    // An empty body labelled JSON is no body: a route that takes one answers that it must be a JSON object.
    expect([empty.status, empty.body.code, empty.body.details]).toEqual([400, 'invalid_request', [{ field: 'body', reason: 'must be a JSON object' }]]);
    const large = await request(app.getHttpServer()).post('/probe/sign-in').send({ email: 'x'.repeat(2000) });
    expect(large.status).toBe(413);
    expect(large.body.code).toBe('payload_too_large');
  });
});
