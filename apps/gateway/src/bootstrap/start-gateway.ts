import { createServer, IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { GatewayEnvironment, subjectPrefix } from '@dcr/config';
import { AccessLog, createRootModule, openServiceDatabase, PinoNestLogger, ServiceContext } from '@dcr/service-kit';
import { NestMicroservice } from '@nestjs/microservices';
import { createTransportServer, useDomainRpcConventions } from '@dcr/transport';
import type { FastifyReply, FastifyRequest, FastifyServerFactoryHandler } from 'fastify';
import { Authenticator } from '../auth/authenticator';
import { RoutePolicies } from '../auth/route-policies';
import { ConfigReplicator } from '../connect/config-replicator';
import { AllExceptionsFilter } from '../http/all-exceptions.filter';
import { CorsPolicy } from '../http/cors.policy';
import { deprecationHeaders } from '../http/deprecation';
import { configureFormHookRoute } from '../form-connections/raw-body';
import { ControllerMethods } from '../http/controller-methods';
import { DirectLane, DirectRequest } from '../http/direct-lane';
import { directHandlerFor } from '../http/direct-route';
import { errorAnswer } from '../http/error-responder';
import { clientErrorHandler, frameworkErrorHandler } from '../http/framework-errors';
import { useFormBodyParser } from '../http/form-body';
import { useJsonBodyParser } from '../http/json-body';
import { queryParameterCheck } from '../http/query-parameters';
import { bodyCheck } from '../http/unread-body';
import { requestIdOf } from '../http/request-id';
import { addRouteHook, routeMethods } from '../http/route-hooks';
import { EdgeValidationPipe } from '../http/validation.pipe';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { IdempotentRequest } from '../idempotency/idempotency-claim';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { OpenApiDocument } from '../openapi/openapi-document';
import { loggableUrl } from '../observability/loggable-url';
import { trustedProxies } from '../http/trusted-proxies';

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** Consent record imports carry up to 10,000 rows: that route alone takes bodies up to 16 MiB. */
export const IMPORT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** With ACCESS_LOG=errors, a successful request is still logged when it took this long. */
const SLOW_REQUEST_MS = 1000;

export interface RunningGateway {
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

/**
 * What every answer under `/api/` carries, errors included, on the Fastify path and the direct lane
 * alike: API answers name people, their decisions and credentials shown once, so no cache keeps
 * them. A route that says otherwise for its own answers (a receipt: `private, no-store`) replaces it.
 */
const NO_STORE: ReadonlyArray<readonly [string, string]> = [['cache-control', 'no-store']];
function apiAnswerHeaders(url: string): ReadonlyArray<readonly [string, string]> {
  return url.startsWith('/api/') ? NO_STORE : [];
}

/**
 * The public HTTP edge of one country, on Fastify (chosen for throughput: the `/api/v1/me` target
 * is measured against a bare Fastify server). It is also a NATS (or in-process) microservice, for
 * configuration replicated from peer countries and for its own health round trip.
 */
export async function startGateway(context: ServiceContext): Promise<RunningGateway> {
  const env = context.env as GatewayEnvironment;
  const dataSource = await openServiceDatabase(context);
  const lane = new DirectLane();
  const adapter = new FastifyAdapter({
    // The HTTP server Fastify would make, with the direct lane in front of Fastify's handler (see
    // DirectLane): Fastify's own settings of its server are applied here as Fastify applies them.
    serverFactory: (handler: FastifyServerFactoryHandler, options: Record<string, unknown>) => {
      const settings = options as {
        http?: ServerOptions;
        keepAliveTimeout: number;
        requestTimeout: number;
        connectionTimeout: number;
        maxRequestsPerSocket?: number;
      };
      const server = createServer(settings.http ?? {}, (request: IncomingMessage, response: ServerResponse) => {
        if (!lane.answer(request, response)) handler(request, response);
      });
      server.keepAliveTimeout = settings.keepAliveTimeout;
      server.requestTimeout = settings.requestTimeout;
      server.setTimeout(settings.connectionTimeout);
      if (settings.maxRequestsPerSocket && settings.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = settings.maxRequestsPerSocket;
      return server;
    },
    // Fastify's own per-request child loggers are off: the gateway writes one access line per
    // request itself (onResponse below), with the request id, from the service logger.
    logger: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT_BYTES,
    // Forwarding headers only from the proxies TRUST_PROXY names (private and loopback peers by default).
    trustProxy: trustedProxies(env),
    // No Nest middleware anywhere (hooks do that work), so no @fastify/middie: its `onRequest` hook
    // would run for every request with nothing to call. Nest middleware would need middie back.
    skipMiddie: true,
    // What Fastify and Node's parser refuse before a route runs is answered in the error contract too.
    frameworkErrors: frameworkErrorHandler(context.logger),
    clientErrorHandler,
  });
  const app = await NestFactory.create<NestFastifyApplication>(createRootModule(context, dataSource), adapter, {
    logger: new PinoNestLogger(context.logger),
  });

  const fastify = app.getHttpAdapter().getInstance();
  // Idempotency-Key on mutating POSTs: claim or replay before the handler, keep the answer after it.
  // Route hooks of the POST routes only (added as routes are registered, below): GETs run neither.
  const idempotency = app.get(IdempotencyService);
  const claimIdempotencyKey = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || key === undefined) return done();
    const path = request.url.split('?')[0];
    const scope = idempotency.scopeOf(request.headers, path);
    if (!scope) return done();
    idempotency
      .begin(scope, String(key), request.method, path, request.body)
      .then((outcome) => {
        if (outcome.kind === 'proceed') {
          (request as IdempotentRequest).idempotency = { scope: outcome.scope, key: outcome.key };
          return done();
        }
        void reply.status(outcome.status).header('idempotent-replayed', 'true').type(outcome.contentType).send(outcome.body);
      })
      .catch((error: Error) => done(error));
  };
  const keepIdempotentAnswer = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const claim = (request as IdempotentRequest).idempotency;
    if (!claim) return done(null, payload);
    (request as IdempotentRequest).idempotency = undefined;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    const type = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
    void idempotency.finish(claim.scope, claim.key, reply.statusCode, body, type).then(() => done(null, payload));
  };
  const cors = app.get(CorsPolicy);
  const metrics = app.get(GatewayMetrics);
  const { logger } = context;
  const logAll = env.ACCESS_LOG === 'all';
  const accessLog = new AccessLog(logger);
  metrics.setCountry(env.COUNTRY);
  /** The metrics sample and (with ACCESS_LOG=all, or for a failure or a slow answer) the access line of an answer. */
  const recordAnswer = (
    request: DirectRequest,
    status: number,
    elapsed: number,
    route: string,
    observe: (method: string, status: number, elapsedMs: number) => void,
  ) => {
    observe(request.method, status, elapsed);
    if (logAll || status >= 400 || elapsed >= SLOW_REQUEST_MS) {
      accessLog.write({ requestId: request.id, method: request.method, url: loggableUrl(request.url), route, status, durationMs: elapsed });
    }
  };
  /**
   * A route's own `onResponse` hook: its path and its metrics cells are known when it is registered,
   * so an answer costs neither Fastify's `request.routeOptions` (a new object per read) nor a label key.
   */
  const answerRecorder = (route: string) => {
    const observe = metrics.forRoute(route);
    return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      recordAnswer(request, reply.statusCode, reply.elapsedTime, route, observe);
      done();
    };
  };
  const authenticator = app.get(Authenticator);
  const policies = app.get(RoutePolicies);
  const controllerMethods = app.get(ControllerMethods);
  const openApi = app.get(OpenApiDocument);
  // Routes are registered at init, after this hook. Each is traced back to its controller method,
  // whose decorators decide, once: its authentication (a preHandler hook, first: nothing else runs for
  // a caller who is refused), the query parameters an /api/v1 route takes (any other is refused next), whether it takes a body at all, and whether it is answered directly (@DirectRoute(): by Fastify without
  // Nest's pipeline, and a plain GET of its path by the direct lane, before Fastify). It also
  // raises the body limit of the import route only, keeps the raw body of the form builder's signed
  // webhook (and only there), and gives POST routes the idempotency hooks (unless @AnswerNotKept()).
  fastify.addHook('onRoute', (route) => {
    const methods = routeMethods(route);
    const resolved = controllerMethods.resolve(route.handler.name, `${methods.join(',')} ${route.url}`);
    const policy = policies.of(resolved);
    openApi.noteScopes(methods, route.url, policy.scopes, policy.anyScope);
    // Added first, then authentication before it: a caller who is refused learns nothing of the query.
    const checkQuery = queryParameterCheck(route.url, resolved);
    if (checkQuery) addRouteHook(route, 'preHandler', checkQuery, 'first');
    // A body sent to a route that reads none is refused after the query, naming its fields.
    const checkBody = bodyCheck(route.url, resolved);
    if (checkBody) addRouteHook(route, 'preHandler', checkBody);
    const authenticate = authenticator.hookFor(policy);
    if (authenticate) addRouteHook(route, 'preHandler', authenticate, 'first');
    const direct = directHandlerFor(resolved, route.url);
    if (direct) {
      route.handler = direct.handler;
      const admit = authenticator.admitterFor(policy);
      if (methods.includes('GET') && admit) {
        lane.add({
          path: route.url,
          admit,
          answer: direct.answer,
          before: [...Object.entries(deprecationHeaders(route.url) ?? {}), ...apiAnswerHeaders(route.url)],
          after: direct.headers,
          observe: metrics.forRoute(route.url),
        });
      }
    }
    if (route.url === '/api/v1/consent_records/imports' && methods.includes('POST')) route.bodyLimit = IMPORT_BODY_LIMIT_BYTES;
    configureFormHookRoute(route);
    addRouteHook(route, 'onResponse', answerRecorder(route.url));
    if (methods.includes('POST') && policy.keepsAnswers) {
      openApi.noteIdempotencyKey(route.url);
      addRouteHook(route, 'preHandler', claimIdempotencyKey);
      addRouteHook(route, 'onSend', keepIdempotentAnswer);
    }
  });
  // Callback-style hooks: on the hot path they avoid a promise per hook per request.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-request-id', request.id);
    for (const [name, value] of apiAnswerHeaders(request.url)) reply.header(name, value);
    const deprecated = deprecationHeaders(request.url);
    if (deprecated) reply.headers(deprecated);
    if (!cors.apply(request, reply)) done();
  });
  // Requests no route matched (404s), labelled `unmatched`: each route's own hook records the rest.
  const observeUnmatched = metrics.forRoute('unmatched');
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.is404) recordAnswer(request, reply.statusCode, reply.elapsedTime, 'unmatched', observeUnmatched);
    done();
  });

  // What the lane shares with the Fastify path (the request id, the error answer, the metrics and
  // access line); from the server's close on, it leaves every request to Fastify.
  lane.attach({
    requestIdOf,
    errorAnswer: (error, requestId, hasHeader) => errorAnswer(error, requestId, logger, hasHeader),
    recordAnswer,
  });
  fastify.addHook('preClose', (done) => {
    lane.close();
    done();
  });

  useJsonBodyParser(app);
  useFormBodyParser(app);
  app.useGlobalPipes(new EdgeValidationPipe());
  app.useGlobalFilters(new AllExceptionsFilter(context.logger));

  const microservice = app.connectMicroservice(
    {
      strategy: createTransportServer(env.TRANSPORT, {
        bus: context.bus,
        servers: env.NATS_URL,
        prefix: subjectPrefix(env.COUNTRY, env.SUBJECT_NAMESPACE),
        service: context.definition.name,
      }),
    },
    { inheritAppConfig: false, deferInitialization: true },
  ) as NestMicroservice;
  // The RPC validation pipe and domain error filter are read when the listeners are registered: so
  // they go in first, then what connectMicroservice does itself when not deferred. (Registered after
  // it, Nest warned they would not apply, and the gateway's own handlers answered internal_error for
  // an unknown application or an invalid payload.)
  useDomainRpcConventions(microservice, new PinoNestLogger(context.logger.child({ context: 'DomainRpcExceptionFilter' })));
  microservice.registerListeners();
  microservice.setIsInitialized(true);
  microservice.setIsInitHookCalled(true);

  await app.init();
  openApi.build(app);
  const replicator = app.get(ConfigReplicator);
  await replicator.loadLocal();
  await app.startAllMicroservices();
  await replicator.pullFromPeers(env.COUNTRY);
  await app.listen({ port: env.PORT, host: env.HOST });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  const url = `http://${env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST}:${port}`;
  context.logger.info({ url }, 'gateway listening');
  return {
    app,
    url,
    close: async () => {
      await app.close();
      // The access lines of the last requests, now rather than at the next timer or at exit.
      accessLog.flush();
    },
  };
}
