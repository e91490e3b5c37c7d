import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import { CountryClient } from '@dcr/transport';
import { firstValueFrom, timeout } from 'rxjs';
import { SnapshotPartReply } from '@dcr/contracts';
import { forEachPart } from './snapshot-parts';

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

  /**
   * Sends `event` to every peer country, fire and forget (replicated configuration: each peer also
   * pulls, so a lost event heals); a failure is logged as a warning with `what`.
   */
  emitToPeers(subject: string, event: unknown, logger: Logger, what: string): void {
    for (const peer of this.peerCountries()) {
      this.peer(peer)
        .emit(subject, event)
        .subscribe({ error: (error) => logger.warn(`${what} to ${peer} failed: ${String(error)}`) });
    }
  }

  /**
   * Asks every peer country at once and hands each answer to `received`. An answer in parts (a
   * snapshot too large for one message: `next_after`, snapshotPart) is asked for part by part,
   * `after` the last, each part handed over as it comes. A peer that does not answer within
   * `timeoutMs` (still starting, or down) is skipped with a debug line, for the next periodic pull
   * to catch up; any other failure is a warning, since the next pull would meet it again.
   */
  async askPeers<R>(
    subject: string,
    request: object,
    received: (reply: R, peer: string) => Promise<void>,
    logger: Logger,
    what: string,
    timeoutMs = 10_000,
  ): Promise<void> {
    await Promise.all(
      this.peerCountries().map(async (peer) => {
        try {
          await forEachPart(
            (after) => firstValueFrom(this.peer(peer).send<R & SnapshotPartReply>(subject, after === undefined ? request : { ...request, after }).pipe(timeout(timeoutMs))),
            (reply) => received(reply, peer),
          );
        } catch (error) {
          const unreachable = error instanceof DomainError && (error.code === 'service_unavailable' || error.code === 'upstream_timeout');
          if (unreachable || !(error instanceof DomainError)) logger.debug(`${what} from ${peer} skipped: ${(error as Error).message}`);
          else logger.warn(`${what} from ${peer} failed: ${error.message}`);
        }
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.own, ...this.peers.values()].map((client) => client.close()));
  }
}
