import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  ApplicationSnapshot,
  CONFIG_APPLICATION_CHANGED,
  CONFIG_SNAPSHOT,
  ConfigSnapshotReply,
  ConfigSnapshotRequest,
} from '@dcr/contracts';
import { ConfigReplicator } from './config-replicator';

/** The gateway's NATS side: configuration arriving from, and requested by, peer countries. */
@Controller()
export class ConfigSyncController {
  constructor(private readonly replicator: ConfigReplicator) {}

  @EventPattern(CONFIG_APPLICATION_CHANGED)
  async changed(@Payload() snapshot: ApplicationSnapshot): Promise<void> {
    await this.replicator.receive(snapshot);
  }

  @MessagePattern(CONFIG_SNAPSHOT)
  async snapshot(@Payload() _request: ConfigSnapshotRequest): Promise<ConfigSnapshotReply> {
    return { applications: await this.replicator.everything() };
  }
}
