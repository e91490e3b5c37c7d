import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import { CountryClient } from '@dcr/transport';

/**
 * The transport clients a service may use: one to its own country's services, and one per peer
 * country for the few messages allowed to cross a border (opaque ids, statuses, counts, and
 * application configuration, which is not personal data).
 */
@Injectable()
export class ServiceClients implements OnApplicationShutdown {
  constructor(
    readonly own: CountryClient,
    private readonly peers: ReadonlyMap<string, CountryClient>,
  ) {}

  peerCountries(): string[] {
    return [...this.peers.keys()];
  }

  peer(country: string): CountryClient {
    const client = this.peers.get(country.toUpperCase());
    if (!client) throw new DomainError('service_unavailable', `Country ${country} is not a configured peer`);
    return client;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.own, ...this.peers.values()].map((client) => client.close()));
  }
}
