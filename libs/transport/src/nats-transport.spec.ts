import { NatsCountryClient } from './client/nats-country-client';
import { NatsCountryServer } from './server/nats-country-server';
import { describeTransportContract } from './testing/transport-contract';

// The real NATS server of this machine (never a mock); NATS_URL points elsewhere if needed.
const servers = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

describeTransportContract('NATS', () => ({
  createServer: (options) => new NatsCountryServer({ ...options, servers }),
  createClient: (options) => new NatsCountryClient({ ...options, servers }),
}));
