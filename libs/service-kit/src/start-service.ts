import { INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig, ServiceEnvironment, subjectPrefix, ConfigError } from '@dcr/config';
import { createServiceDataSource, migrateServiceSchema } from '@dcr/persistence';
import { createTransportServer, InProcessBus, useDomainRpcConventions } from '@dcr/transport';
import type { DestinationStream } from 'pino';
import type { Server } from 'node:http';
import { DataSource } from 'typeorm';
import { createLogger, PinoNestLogger } from './logger';
import { ServiceCoreModule } from './service-core.module';
import { ServiceContext, ServiceDefinition } from './service-definition';
import { reclaimMemoryWhenIdle } from './idle-memory';
import { startHealthServer } from './health-server';

/** Connects to the country's database and brings the service's schema up to date. */
export async function openServiceDatabase(context: ServiceContext): Promise<DataSource> {
  const { definition, env } = context;
  const dataSource = createServiceDataSource({
    url: context.databaseUrl,
    schema: definition.schema,
    entities: definition.entities,
    migrations: definition.migrations,
    poolSize: env.DB_POOL_SIZE,
    applicationName: `${env.COUNTRY.toLowerCase()}/${definition.name}`,
    log: context.logger,
  });
  await dataSource.initialize();
  const applied = await migrateServiceSchema(dataSource);
  if (applied.length > 0) context.logger.info({ migrations: applied }, 'migrations applied');
  return dataSource;
}

/** The root module of one service instance: the shared core plus the service's own module. */
export function createRootModule(context: ServiceContext, dataSource: DataSource): new () => unknown {
  class ServiceRootModule {}
  Module({ imports: [ServiceCoreModule.forRoot(context, dataSource), context.definition.module] })(ServiceRootModule);
  return ServiceRootModule;
}

/** Starts a NATS (or in-process) microservice for a definition; the gateway has its own bootstrap. */
export async function startService(context: ServiceContext): Promise<INestMicroservice> {
  const dataSource = await openServiceDatabase(context);
  const { env, definition, bus } = context;
  const app = await NestFactory.createMicroservice(createRootModule(context, dataSource), {
    strategy: createTransportServer(env.TRANSPORT, {
      bus,
      servers: env.NATS_URL,
      prefix: subjectPrefix(env.COUNTRY, env.SUBJECT_NAMESPACE),
      service: definition.name,
    }),
    logger: new PinoNestLogger(context.logger),
  });
  useDomainRpcConventions(app, new PinoNestLogger(context.logger.child({ context: 'DomainRpcExceptionFilter' })));
  await app.listen();
  context.logger.info({ transport: env.TRANSPORT }, `${definition.name} listening`);
  return app;
}

export function countryContext(
  definition: ServiceDefinition,
  env: ServiceEnvironment,
  options: { databaseUrl?: string; bus?: InProcessBus; logDestination?: DestinationStream } = {},
): ServiceContext {
  return {
    definition,
    env,
    databaseUrl: options.databaseUrl ?? env.DATABASE_URL,
    bus: options.bus,
    logger: createLogger({
      service: definition.name,
      country: env.COUNTRY,
      level: env.LOG_LEVEL,
      destination: options.logDestination,
    }),
  };
}

/**
 * `main` of a standalone service process: validate configuration (exit 1 naming the bad variable),
 * `migrate` only when asked to, otherwise serve until SIGTERM/SIGINT.
 */
export async function runStandalone<E extends ServiceEnvironment>(
  definition: ServiceDefinition,
  start: (context: ServiceContext) => Promise<{ close(): Promise<void> }> = startService,
  shape: new () => E = (definition.environment ?? ServiceEnvironment) as new () => E,
): Promise<void> {
  let env: E;
  try {
    env = loadConfig(shape, process.env, definition.name);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const context = countryContext(definition, env);
  let app: { close(): Promise<void> };
  let health: Server | undefined;
  try {
    if (process.argv.includes('migrate')) {
      const dataSource = await openServiceDatabase(context);
      await dataSource.destroy();
      return;
    }
    app = await start(context);
    if (start === startService && env.HEALTH_PORT) health = await serveProbes(app as INestMicroservice, context, env.HEALTH_PORT);
  } catch (error) {
    // A service that cannot start exits, so that its supervisor restarts it instead of waiting on a probe.
    context.logger.fatal({ err: error }, `${definition.name} failed to start`);
    context.logger.flush();
    process.stderr.write(`${definition.name} failed to start: ${(error as Error).stack ?? String(error)}
`);
    process.exit(1);
  }
  const stopReclaiming = reclaimMemoryWhenIdle();
  const stop = async () => {
    stopReclaiming();
    health?.close();
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** The probe port of a service's own process (HEALTH_PORT): see startHealthServer. */
async function serveProbes(app: INestMicroservice, context: ServiceContext, port: number): Promise<Server> {
  let transport: string | undefined;
  app.status.subscribe((status) => (transport = status));
  const dataSource = app.get(DataSource);
  const server = await startHealthServer({
    port,
    logger: context.logger.child({ context: 'HealthServer' }),
    database: () => dataSource.query('SELECT 1'),
    transport: () => transport,
  });
  context.logger.info({ port }, `${context.definition.name} probes on /healthz and /readyz`);
  return server;
}
