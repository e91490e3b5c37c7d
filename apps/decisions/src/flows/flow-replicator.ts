import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { FLOWS_CHANGED, FLOWS_SNAPSHOT, FlowChangedEvent, FlowsSnapshotReply, FlowsSnapshotRequest, FlowVersionSnapshot } from '@dcr/contracts';
import { SERVICE_CONTEXT, ServiceClients, ServiceContext, snapshotPart } from '@dcr/service-kit';
import { FlowVersion } from './flow-version.entity';
import { fromSnapshot, toSnapshot } from './flow-message';
import { FlowsRepository } from './flows.repository';

/**
 * Flows are configuration, the same in every country: the authoring country pushes every version of
 * a changed flow to its peers, and each country pulls what its peers authored at start and every
 * minute, which heals anything missed while a peer was down. A replica keeps the highest revision.
 */
@Injectable()
export class FlowReplicator implements OnApplicationBootstrap {
  private readonly logger = new Logger(FlowReplicator.name);

  constructor(
    private readonly flows: FlowsRepository,
    private readonly clients: ServiceClients,
    @Inject(SERVICE_CONTEXT) private readonly context: ServiceContext,
  ) {}

  onApplicationBootstrap(): void {
    // Peers may still be starting; the periodic pull catches up with them.
    void this.pullFromPeers();
  }

  push(rows: FlowVersion[]): void {
    const event: FlowChangedEvent = { versions: rows.map(toSnapshot) };
    this.clients.emitToPeers(FLOWS_CHANGED, event, this.logger, 'flow push');
  }

  async receive(versions: FlowVersionSnapshot[]): Promise<void> {
    for (const snapshot of versions) await this.flows.applyReplica(fromSnapshot(snapshot));
  }

  /** The flow versions authored here, a part at a time (snapshotPart: by flow id, then version). */
  async authoredHere(after?: string): Promise<FlowsSnapshotReply> {
    const versions = (await this.flows.authoredIn(this.context.env.COUNTRY)).map(toSnapshot);
    const { items, ...cursor } = snapshotPart(versions, (version) => `${version.id}#${String(version.version).padStart(10, '0')}`, after);
    return { versions: items, ...cursor };
  }

  @Interval(60_000)
  async pullFromPeers(): Promise<void> {
    const request: FlowsSnapshotRequest = { from_country: this.context.env.COUNTRY };
    await this.clients.askPeers<FlowsSnapshotReply>(FLOWS_SNAPSHOT, request, (reply) => this.receive(reply.versions), this.logger, 'flow pull');
  }
}
