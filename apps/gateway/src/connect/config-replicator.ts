import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import {
  ApplicationSnapshot,
  CONFIG_APPLICATION_APPLY,
  CONFIG_APPLICATION_CHANGED,
  CONFIG_SNAPSHOT,
  ConfigApplyReply,
  ConfigSnapshotReply,
  ConfigSnapshotRequest,
} from '@dcr/contracts';
import { ServiceClients } from '@dcr/service-kit';
import { TransportRecord } from '@dcr/transport';
import { firstValueFrom } from 'rxjs';
import { ConnectRepository } from './connect.repository';
import { CredentialIndex } from './credential-index';

/** How long a change waits for a peer to hold it before its caller is answered anyway. */
const APPLY_TIMEOUT_MS = 2000;

/**
 * Keeps application configuration the same in every country. The country where a change is made
 * stores it, indexes it and sends the whole snapshot to each peer, waiting (up to APPLY_TIMEOUT_MS)
 * until each has stored and indexed it, so that the change is in force in every reachable country
 * when its caller is answered; a peer stores it when its revision is newer. At start a gateway loads its own database and asks each peer for everything it
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

  /**
   * After a local change: index it and send it to every peer, answering once every peer holds it
   * (CONFIG_APPLICATION_APPLY) or, for a peer that does not answer in time, once it has been sent as
   * an event instead (CONFIG_APPLICATION_CHANGED; the peer's pull at its start heals what it missed).
   */
  async changed(applicationId: string): Promise<void> {
    const snapshot = await this.indexStored(applicationId);
    if (snapshot) await this.push(snapshot);
  }

  /**
   * A peer's snapshot: stored (ConnectRepository.applySnapshot: the newest revision's fields and
   * origins, every credential either side has) and indexed; when this country holds credentials the
   * peer lacks, its merged state goes back to every peer, so the countries converge. With
   * `echoInBackground` (a peer's CONFIG_APPLICATION_APPLY, which waits for this answer) that merged
   * state is sent back without waiting for it, so two countries never wait on each other.
   */
  async receive(snapshot: ApplicationSnapshot, { echoInBackground = false } = {}): Promise<void> {
    const { changed, peerBehind } = await this.repository.applySnapshot(snapshot);
    if (!changed && !peerBehind) return;
    const stored = await this.indexStored(snapshot.id);
    if (!peerBehind || !stored) return;
    const echo = this.push(stored);
    if (!echoInBackground) return echo;
    void echo.catch((error) => this.logger.warn(`configuration echo of ${snapshot.id} failed: ${String(error)}`));
  }

  /** This country's stored snapshot of the application, put in force in the index. */
  private async indexStored(applicationId: string): Promise<ApplicationSnapshot | undefined> {
    const snapshot = await this.repository.snapshot(applicationId);
    if (snapshot) this.index.apply(snapshot);
    return snapshot ?? undefined;
  }

  private async push(snapshot: ApplicationSnapshot): Promise<void> {
    await Promise.all(
      this.clients.peerCountries().map(async (peer) => {
        try {
          await firstValueFrom(this.clients.peer(peer).send<ConfigApplyReply>(CONFIG_APPLICATION_APPLY, new TransportRecord(snapshot, { timeoutMs: APPLY_TIMEOUT_MS })));
        } catch (error) {
          this.logger.warn(`configuration push to ${peer} not confirmed (${String(error)}); sent as an event instead`);
          this.clients
            .peer(peer)
            .emit(CONFIG_APPLICATION_CHANGED, snapshot)
            .subscribe({ error: (failure) => this.logger.warn(`configuration push to ${peer} failed: ${String(failure)}`) });
        }
      }),
    );
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
