import { Controller, Get, Module, Post, Query } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiQuery } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import pino from 'pino';
import request from 'supertest';
import { AllExceptionsFilter } from '../src/http/all-exceptions.filter';
import { ControllerMethods } from '../src/http/controller-methods';
import { acceptedQueryParameters, queryParameterCheck } from '../src/http/query-parameters';
import { EdgeValidationPipe } from '../src/http/validation.pipe';

class TypeQueryDto {
  @IsOptional()
  @IsString()
  type?: string;
}

@Controller()
class ProbeController {
  @Get('api/v1/me')
  me() {
    return { ok: true };
  }

  @Post('api/v1/things')
  create() {
    return { created: true };
  }

  @Get('api/v1/flows/:id')
  flow(@Query('version') version: string | undefined) {
    return { version: version ?? null };
  }

  @Get('api/v1/status')
  @ApiQuery({ name: 'subject[email]', required: false })
  @ApiQuery({ name: 'subject[id]', required: false })
  status(@Query() query: Record<string, unknown>) {
    return { query };
  }

  @Get('api/v1/activity')
  activity(@Query() query: TypeQueryDto) {
    return { type: query.type ?? null };
  }

  @Get('accord/:id')
  page() {
    return { page: true };
  }

  @Get('sdk/v1/manifest.json')
  manifest() {
    return { sdk: true };
  }
}

@Controller()
class UndeclaredController {
  @Get('api/v1/undeclared')
  undeclared(@Query() query: Record<string, unknown>) {
    return query;
  }
}

@Module({ controllers: [ProbeController, UndeclaredController], providers: [ControllerMethods] })
class ProbeModule {}

/** Every /api/v1 route refuses a query parameter it does not take, naming it; other routes take any. */
describe('query parameters an /api/v1 route does not take', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new EdgeValidationPipe());
    app.useGlobalFilters(new AllExceptionsFilter(pino({ level: 'silent' })));
    const methods = app.get(ControllerMethods);
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (route) => {
        if (route.url === '/api/v1/undeclared') return;
        const check = queryParameterCheck(route.url, methods.resolve(route.handler.name, route.url));
        if (check) route.preHandler = check;
      });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
  });

  const refused = (...names: string[]) => ({
    message: 'Invalid query parameters',
    code: 'invalid_request',
    details: names.map((name) => ({ field: name, reason: `property ${name} should not exist` })),
    request_id: expect.any(String),
  });

  it('refuses any on a route that takes none, naming each, as a query DTO does', async () => {
    expect((await request(app.getHttpServer()).get('/api/v1/me')).body).toEqual({ ok: true });
    expect((await request(app.getHttpServer()).get('/api/v1/me?')).body).toEqual({ ok: true });
    const unknown = await request(app.getHttpServer()).get('/api/v1/me?foo=1&utm_source=x');
    expect([unknown.status, unknown.body]).toEqual([400, refused('foo', 'utm_source')]);
    const post = await request(app.getHttpServer()).post('/api/v1/things?dry_run=true').send({});
    expect([post.status, post.body]).toEqual([400, refused('dry_run')]);
    // The DTO of a route with one names its unknown parameters in the same shape.
    const dto = await request(app.getHttpServer()).get('/api/v1/activity?type=x&foo=1');
    expect([dto.status, dto.body]).toEqual([400, refused('foo')]);
  });

  it('refuses a parameter with an empty name (`?=x`, `?&=x`) with 400 saying so, on routes with and without a query DTO', async () => {
    const empty = { field: '', reason: 'a query parameter has an empty name (`=value` with nothing before the `=`)' };
    for (const path of ['/api/v1/me?=x', '/api/v1/me?&=x', '/api/v1/me?=', '/api/v1/activity?=x', '/api/v1/activity?type=x&=1', '/api/v1/flows/f1?version=2&=x']) {
      const answer = await request(app.getHttpServer()).get(path);
      expect([path, answer.status, answer.body]).toEqual([path, 400, { message: 'Invalid query parameters', code: 'invalid_request', details: [empty], request_id: expect.any(String) }]);
    }
    // Named beside the route's other unknown parameters, in the order sent.
    expect((await request(app.getHttpServer()).get('/api/v1/me?foo=1&=x')).body.details).toEqual([{ field: 'foo', reason: 'property foo should not exist' }, empty]);
    // Empty pairs without a name or a value (`?&&`) are no parameter at all.
    expect((await request(app.getHttpServer()).get('/api/v1/me?&&')).body).toEqual({ ok: true });
  });

  it('takes what a route declares: @Query() names, @ApiQuery() names, its query DTO', async () => {
    expect((await request(app.getHttpServer()).get('/api/v1/flows/f1?version=2')).body).toEqual({ version: '2' });
    expect((await request(app.getHttpServer()).get('/api/v1/flows/f1?version=2&versoin=3')).body).toEqual(refused('versoin'));
    expect((await request(app.getHttpServer()).get('/api/v1/status?subject%5Bemail%5D=a%40example.com')).body).toEqual({ query: { 'subject[email]': 'a@example.com' } });
    expect((await request(app.getHttpServer()).get('/api/v1/status?subject[id]=sub_1&subject[externalid]=x')).body).toEqual(refused('subject[externalid]'));
    expect((await request(app.getHttpServer()).get('/api/v1/activity?type=consent.granted')).body).toEqual({ type: 'consent.granted' });
  });

  it('leaves pages and scripts their query parameters (tracking ones included)', async () => {
    expect((await request(app.getHttpServer()).get('/accord/flw_1?utm_source=newsletter&utm_medium=email')).body).toEqual({ page: true });
    expect((await request(app.getHttpServer()).get('/sdk/v1/manifest.json?v=3')).body).toEqual({ sdk: true });
    expect((await request(app.getHttpServer()).get('/accord/flw_1?=x&&=y')).body).toEqual({ page: true });
  });

  it('fails the start for a route reading its query whole with neither a DTO nor @ApiQuery() declarations', () => {
    const methods = app.get(ControllerMethods);
    const undeclared = methods.resolve('UndeclaredController.undeclared', 'GET /api/v1/undeclared');
    expect(() => acceptedQueryParameters(undeclared)).toThrow('UndeclaredController.undeclared reads its query whole without a query DTO: declare what it takes with @ApiQuery()');
    expect(acceptedQueryParameters(methods.resolve('ProbeController.activity', 'GET /api/v1/activity'))).toBeUndefined();
    expect([...acceptedQueryParameters(methods.resolve('ProbeController.status', 'GET /api/v1/status'))!].sort()).toEqual(['subject[email]', 'subject[id]']);
  });
});
