import { Logger } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import { CountryClient } from '@dcr/transport';
import { of, throwError } from 'rxjs';
import { ServiceClients } from './service-clients';

describe('ServiceClients.askPeers', () => {
  const logger = { debug: jest.fn(), warn: jest.fn() } as unknown as Logger;

  it('follows a snapshot answered in parts, handing over each part as it comes', async () => {
    const parts: Record<string, { items: string[]; next_after?: string }> = {
      first: { items: ['a', 'b'], next_after: 'b' },
      b: { items: ['c', 'd'], next_after: 'd' },
      d: { items: ['e'] },
    };
    const asked: unknown[] = [];
    const peer = { send: (_subject: string, request: { after?: string }) => (asked.push(request), of(parts[request.after ?? 'first'])) };
    const clients = new ServiceClients({} as CountryClient, new Map([['DE', peer as unknown as CountryClient]]));
    const received: string[] = [];
    await clients.askPeers<{ items: string[] }>('x.snapshot', { from_country: 'US' }, async (reply) => void received.push(...reply.items), logger, 'pull');
    expect(received).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(asked).toEqual([{ from_country: 'US' }, { from_country: 'US', after: 'b' }, { from_country: 'US', after: 'd' }]);
  });

  it('warns of a peer that refuses (it would refuse the next pull too), and only notes one that is not there', async () => {
    const refusing = { send: () => throwError(() => new DomainError('payload_too_large', 'The message for de.x.snapshot is larger than the bus accepts')) };
    const absent = { send: () => throwError(() => new DomainError('service_unavailable', 'No service answers de.x.snapshot')) };
    const clients = new ServiceClients({} as CountryClient, new Map([['DE', refusing as unknown as CountryClient], ['FR', absent as unknown as CountryClient]]));
    await clients.askPeers('x.snapshot', { from_country: 'US' }, async () => undefined, logger, 'pull');
    expect(logger.warn).toHaveBeenCalledWith('pull from DE failed: The message for de.x.snapshot is larger than the bus accepts');
    expect(logger.debug).toHaveBeenCalledWith('pull from FR skipped: No service answers de.x.snapshot');
  });
});
