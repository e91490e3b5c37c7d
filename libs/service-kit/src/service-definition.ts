import { Type } from '@nestjs/common';
import { ServiceEnvironment } from '@dcr/config';
import type { InProcessBus } from '@dcr/transport';
import type { Logger } from 'pino';

/** What a service declares about itself; the same definition runs standalone or embedded. */
export interface ServiceDefinition {
  /** Service name, also the second token of its NATS subjects (`us.<name>.…`). */
  name: string;
  /** The PostgreSQL schema it owns. */
  schema: string;
  entities: Function[];
  migrations: Function[];
  /** The Nest module holding the service's controllers and providers. */
  module: Type<unknown>;
  /** The configuration shape validated at boot, when the service needs more than the common one. */
  environment?: new () => ServiceEnvironment;
}

/** Everything a running service instance gets from its host process. */
export interface ServiceContext {
  definition: ServiceDefinition;
  env: ServiceEnvironment;
  /** The database of the service's country. */
  databaseUrl: string;
  /** Present when TRANSPORT=inprocess: the process-wide bus all embedded services share. */
  bus?: InProcessBus;
  logger: Logger;
}

export const SERVICE_CONTEXT = Symbol('SERVICE_CONTEXT');
/** A ClientProxy reaching the services of this service's own country. */
export const COUNTRY_CLIENT = Symbol('COUNTRY_CLIENT');
/** PeerClients: ClientProxies addressed to other countries, for the few messages allowed to cross. */
export const PEER_CLIENTS = Symbol('PEER_CLIENTS');
