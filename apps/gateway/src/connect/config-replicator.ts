import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import {
  ApplicationSnapshot,
  CONFIG_APPLICATION_CHANGED,
  CONFIG_SNAPSHOT,
  ConfigSnapshotReply,
  ConfigSnapshotRequest,
} from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { ConnectRepository } from './connect.repository';
import { CredentialIndex } from './credential-index';

/**
 * Keeps application configuration the same in every country. The country where a change is made
 * stores it, indexes it and sends the whole snapshot to each peer; a peer stores it when its
 * revision is newer. At start a gateway loads its own database and asks each peer for everything it
 * has, which heals changes missed while it was down. Replicas of one country's gateway pick up each
 * other's changes from the database every few seconds.
 */
@Injectable()
export class ConfigReplicator {
  private readonly logger = new Logger(ConfigReplicator.name);
  private seenUntil?: Date;

  constructor(
    private readonly repository: ConnectRepository,
    private readonly index: CredentialIndex,
    private readonly clients: ServiceClients,
  ) {}

  /** Loads this country's configuration into the index; called before the gateway listens. */
  async loadLocal(): Promise<void> {
    await this.refresh();
  }

  /** Asks every peer for its configuration; a peer that is not up yet will send its changes later. */
  async pullFromPeers(country: string): Promise<void> {
    // In parts (ConfigSnapshotReply.next_after), each one message on the bus.
    const request: ConfigSnapshotRequest = { from_country: country };
    await this.clients.askPeers<ConfigSnapshotReply>(
      CONFIG_SNAPSHOT,
      request,
      async (reply) => {
        for (const snapshot of reply.applications) await this.receive(snapshot);
      },
      this.logger,
      'configuration pull',
    );
  }

  /** After a local change: index it and send it to every peer. */
  async changed(applicationId: string): Promise<void> {
    const snapshot = await this.repository.snapshot(applicationId);
    if (!snapshot) return;
    this.index.apply(snapshot);
    for (const peer of this.clients.peerCountries()) {
      this.clients
        .peer(peer)
        .emit(CONFIG_APPLICATION_CHANGED, snapshot)
        .subscribe({ error: (error) => this.logger.warn(`configuration push to ${peer} failed: ${String(error)}`) });
    }
  }

  /**
   * A peer's snapshot: stored (ConnectRepository.applySnapshot: the newest revision's fields and
   * origins, every credential either side has) and indexed; when this country holds credentials the
   * peer lacks, its merged state goes back to every peer, so the countries converge.
   */
  async receive(snapshot: ApplicationSnapshot): Promise<void> {
    const { changed, peerBehind } = await this.repository.applySnapshot(snapshot);
    if (peerBehind) return this.changed(snapshot.id);
    if (changed) {
      const stored = await this.repository.snapshot(snapshot.id);
      if (stored) this.index.apply(stored);
    }
  }

  async everything(): Promise<ApplicationSnapshot[]> {
    return this.repository.snapshotsChangedSince();
  }

  @Interval(5000)
  async refresh(): Promise<void> {
    try {
      // Overlap the window: a transaction that started earlier may have committed since.
      const since = this.seenUntil ? new Date(this.seenUntil.getTime() - 10_000) : undefined;
      const changed = await this.repository.snapshotsChangedSince(since);
      for (const snapshot of changed) {
        this.index.apply(snapshot);
        const updatedAt = new Date(snapshot.updated_at);
        if (!this.seenUntil || updatedAt > this.seenUntil) this.seenUntil = updatedAt;
      }
    } catch (error) {
      this.logger.warn(`configuration refresh failed: ${(error as Error).message}`);
    }
  }
}
