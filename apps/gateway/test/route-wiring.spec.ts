import { Controller, Get, Header, Module, Param, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern } from '@nestjs/microservices';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DomainError } from '@dcr/domain';
import type { FastifyRequest } from 'fastify';
import pino from 'pino';
import request from 'supertest';
import { AcceptCredentials, AnswerNotKept, PublicRoute, RequireAnyScope, RequireScopes } from '../src/auth/auth.decorators';
import { RoutePolicies, RoutePolicy } from '../src/auth/route-policies';
import { AllExceptionsFilter } from '../src/http/all-exceptions.filter';
import { ControllerMethod, ControllerMethods } from '../src/http/controller-methods';
import { DirectRoute, directHandlerFor } from '../src/http/direct-route';

type PolicyRequest = FastifyRequest & { policy?: RoutePolicy };

@Controller('probe')
@AcceptCredentials('admin', 'api_token')
class ProbeController {
  answered = 0;

  @Get('default')
  byDefault(@Req() req: PolicyRequest) {
    return req.policy;
  }

  @Get('open')
  @PublicRoute()
  open(@Req() req: PolicyRequest) {
    return { policy: req.policy ?? null };
  }

  @Get('scoped')
  @AcceptCredentials('api_token')
  @RequireScopes('decisions:write')
  scoped(@Req() req: PolicyRequest) {
    return req.policy;
  }

  @Get('either')
  @RequireAnyScope('records:read', 'decisions:read')
  either(@Req() req: PolicyRequest) {
    return req.policy;
  }

  @Get('not-kept')
  @AnswerNotKept()
  notKept(@Req() req: PolicyRequest) {
    return req.policy;
  }

  @Get('direct')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @Header('X-Probe', 'direct')
  @DirectRoute()
  direct(@Req() req: PolicyRequest): string {
    this.answered += 1;
    return JSON.stringify({ accepted: req.policy?.accepted, answered: this.answered });
  }

  @Get('direct-refusal')
  @DirectRoute()
  refuse(): never {
    throw new DomainError('forbidden', 'Not for this credential');
  }

  @Get('items/:id')
  item(@Param('id') id: string) {
    return { id };
  }
}

/** A message-only controller with the same class name: it has no HTTP routes to confuse with. */
const MessageProbeController = (() => {
  @Controller()
  class ProbeController {
    @MessagePattern('probe.direct')
    direct() {
      return 'message';
    }
  }
  return ProbeController;
})();

@Module({ controllers: [ProbeController, MessageProbeController], providers: [ControllerMethods, RoutePolicies] })
class ProbeModule {}

/**
 * How the gateway's onRoute hook wires each route from its controller's decorators: the method found
 * by the handler's name, its authentication policy, and a direct Fastify answer where asked for.
 * The hook here records the policy on the request where the gateway authenticates with it.
 */
describe('route wiring from controller metadata', () => {
  let app: NestFastifyApplication;
  const resolved = new Map<string, ControllerMethod>();

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter(), { logger: false });
    app.useGlobalFilters(new AllExceptionsFilter(pino({ level: 'silent' })));
    const methods = app.get(ControllerMethods);
    const policies = app.get(RoutePolicies);
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (route) => {
        const method = methods.resolve(route.handler.name, route.url);
        resolved.set(`${String(route.method)} ${route.url}`, method);
        const policy = policies.of(method);
        route.preHandler = (req: PolicyRequest, _reply, done) => {
          if (!policy.public) req.policy = policy;
          done();
        };
        const direct = directHandlerFor(method, route.url);
        if (direct) route.handler = direct.handler;
      });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('finds the HTTP controller method behind each route, not a message-only namesake', () => {
    const direct = resolved.get('GET /probe/direct');
    expect(direct?.controller).toBe(ProbeController);
    expect(direct?.methodName).toBe('direct');
    expect(direct?.instance).toBeInstanceOf(ProbeController);
    expect(resolved.get('GET /probe/items/:id')?.methodName).toBe('item');
  });

  it('refuses a handler that is no controller method, naming the route', () => {
    const methods = app.get(ControllerMethods);
    expect(() => methods.resolve('directRoute', 'GET /elsewhere')).toThrow('The route GET /elsewhere (handler "directRoute") resolves to no controller method');
    expect(() => methods.resolve('ProbeController.missing', 'GET /missing')).toThrow('no controller method');
  });

  it("reads the policy from the method first, then the controller, with API tokens alone by default", async () => {
    expect((await request(app.getHttpServer()).get('/probe/default')).body).toEqual({ public: false, accepted: ['admin', 'api_token'], scopes: [], anyScope: [], keepsAnswers: true });
    expect((await request(app.getHttpServer()).get('/probe/scoped')).body).toEqual({ public: false, accepted: ['api_token'], scopes: ['decisions:write'], anyScope: [], keepsAnswers: true });
    expect((await request(app.getHttpServer()).get('/probe/either')).body).toEqual({ public: false, accepted: ['admin', 'api_token'], scopes: [], anyScope: ['records:read', 'decisions:read'], keepsAnswers: true });
    // A route that trades a one-time code for a token keeps no answer under an Idempotency-Key.
    expect((await request(app.getHttpServer()).get('/probe/not-kept')).body).toEqual({ public: false, accepted: ['admin', 'api_token'], scopes: [], anyScope: [], keepsAnswers: false });
    expect((await request(app.getHttpServer()).get('/probe/open')).body).toEqual({ policy: null });
    const policies = app.get(RoutePolicies);
    const bare = { controller: class Bare {}, method: function bare() {}, methodName: 'bare', instance: undefined };
    expect(policies.of(bare)).toEqual({ public: false, accepted: ['api_token'], scopes: [], anyScope: [], keepsAnswers: true });
  });

  it('answers a @DirectRoute() from the controller instance, with its @Header() values, after the route hooks', async () => {
    const first = await request(app.getHttpServer()).get('/probe/direct');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers['x-probe']).toBe('direct');
    expect(JSON.parse(first.text)).toEqual({ accepted: ['admin', 'api_token'], answered: 1 });
    const second = await request(app.getHttpServer()).get('/probe/direct');
    expect(JSON.parse(second.text).answered).toBe(2);
  });

  it("sends a direct route's error through the exception filters, in the error shape", async () => {
    const response = await request(app.getHttpServer()).get('/probe/direct-refusal');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ code: 'forbidden', message: 'Not for this credential', request_id: expect.any(String) });
  });

  it('takes @DirectRoute() only on paths without parameters and with constant headers', () => {
    const method = resolved.get('GET /probe/direct')!;
    expect(() => directHandlerFor(method, '/probe/:id')).toThrow('@DirectRoute() is for paths without parameters (/probe/:id)');
    expect(directHandlerFor(resolved.get('GET /probe/items/:id')!, '/probe/items/:id')).toBeUndefined();
  });
});
