import { InProcessClient } from './client/in-process-client';
import { NatsCountryClient } from './client/nats-country-client';
import { createTransportClient, createTransportServer } from './factory';
import { InProcessBus } from './in-process/in-process-bus';
import { InProcessServer } from './server/in-process-server';
import { NatsCountryServer } from './server/nats-country-server';

describe('transport factory', () => {
  const servers = 'nats://127.0.0.1:4222';
  const bus = new InProcessBus();

  it('builds the server and client of the chosen kind', () => {
    expect(createTransportServer('nats', { prefix: 'us', service: 'receipts', servers })).toBeInstanceOf(NatsCountryServer);
    expect(createTransportServer('inprocess', { prefix: 'us', service: 'receipts', bus })).toBeInstanceOf(InProcessServer);
    expect(createTransportClient('nats', { prefix: 'us', servers })).toBeInstanceOf(NatsCountryClient);
    expect(createTransportClient('inprocess', { prefix: 'us', bus })).toBeInstanceOf(InProcessClient);
  });

  it('says what is missing instead of failing later', () => {
    expect(() => createTransportServer('inprocess', { prefix: 'us', service: 'receipts' })).toThrow(/InProcessBus/);
    expect(() => createTransportClient('nats', { prefix: 'us' })).toThrow(/servers or connection/);
    expect(() => createTransportServer('nats', { prefix: 'US', service: 'receipts', servers })).toThrow(/lower-case/);
  });
});
