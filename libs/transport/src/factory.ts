import type { TransportKind } from '@dcr/config';
import type { NatsConnection } from 'nats';
import { CountryClient } from './client/country-client';
import { InProcessClient } from './client/in-process-client';
import { NatsCountryClient } from './client/nats-country-client';
import { InProcessBus } from './in-process/in-process-bus';
import { CountryServer } from './server/country-server';
import { InProcessServer } from './server/in-process-server';
import { NatsCountryServer } from './server/nats-country-server';

/** What either transport may need; each kind checks that its own part is there. */
interface TransportSettings {
  prefix: string;
  /** nats: server URL(s), e.g. NATS_URL. */
  servers?: string | string[];
  /** nats: an existing connection to share instead of `servers`. */
  connection?: NatsConnection;
  /** inprocess: the process-wide bus. */
  bus?: InProcessBus;
}

export interface TransportServerSettings extends TransportSettings {
  service: string;
}

export interface TransportClientSettings extends TransportSettings {
  timeoutMs?: number;
}

/** Picks the server for `TRANSPORT` (see ServiceEnvironment), so `main.ts` has no branch of its own. */
export function createTransportServer(kind: TransportKind, settings: TransportServerSettings): CountryServer {
  if (kind === 'nats') return new NatsCountryServer(settings);
  return new InProcessServer({ ...settings, bus: requireBus(settings.bus, kind) });
}

export function createTransportClient(kind: TransportKind, settings: TransportClientSettings): CountryClient {
  if (kind === 'nats') return new NatsCountryClient(settings);
  return new InProcessClient({ ...settings, bus: requireBus(settings.bus, kind) });
}

function requireBus(bus: InProcessBus | undefined, kind: TransportKind): InProcessBus {
  if (!bus) throw new TypeError(`The ${kind} transport needs the process-wide InProcessBus`);
  return bus;
}
