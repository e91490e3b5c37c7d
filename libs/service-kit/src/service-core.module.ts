import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { subjectPrefix } from '@dcr/config';
import { createTransportClient } from '@dcr/transport';
import { DataSource } from 'typeorm';
import { createHealthController } from './health.controller';
import { ServiceClients } from './service-clients';
import { SERVICE_CONTEXT, ServiceContext } from './service-definition';

export function createServiceClients(context: ServiceContext): ServiceClients {
  const { env, bus } = context;
  const clientFor = (country: string) =>
    createTransportClient(env.TRANSPORT, { bus, servers: env.NATS_URL, prefix: subjectPrefix(country, env.SUBJECT_NAMESPACE) });
  const peers = new Map(env.PEER_COUNTRIES.filter((c) => c !== env.COUNTRY).map((c) => [c, clientFor(c)]));
  return new ServiceClients(clientFor(env.COUNTRY), peers);
}

/**
 * What every service module can inject: its context, its transport clients and its (already
 * migrated) data source, plus the `<service>.health` handler.
 */
@Global()
@Module({})
export class ServiceCoreModule {
  static forRoot(context: ServiceContext, dataSource: DataSource): DynamicModule {
    return {
      module: ServiceCoreModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ retryAttempts: 1 }),
          dataSourceFactory: async () => dataSource,
        }),
      ],
      controllers: [createHealthController(context.definition.name)],
      providers: [
        { provide: SERVICE_CONTEXT, useValue: context },
        { provide: ServiceClients, useFactory: () => createServiceClients(context) },
      ],
      exports: [SERVICE_CONTEXT, ServiceClients],
    };
  }
}
