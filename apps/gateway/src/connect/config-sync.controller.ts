import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  ApplicationIdentityReply,
  ApplicationIdentityRequest,
  ApplicationSnapshot,
  GATEWAY_APPLICATION_IDENTITY,
  CONFIG_APPLICATION_APPLY,
  CONFIG_APPLICATION_CHANGED,
  ConfigApplyReply,
  CONFIG_SNAPSHOT,
  ConfigSnapshotReply,
  ConfigSnapshotRequest,
} from '@dcr/contracts';
import { snapshotPart } from '@dcr/service-kit';
import { notFound } from '@dcr/domain';
import { ConfigReplicator } from './config-replicator';
import { CredentialIndex } from './credential-index';

/** The gateway's NATS side: configuration arriving from, and requested by, peer countries and own services. */
@Controller()
export class ConfigSyncController {
  constructor(
    private readonly replicator: ConfigReplicator,
    private readonly index: CredentialIndex,
  ) {}

  @EventPattern(CONFIG_APPLICATION_CHANGED)
  async changed(@Payload() snapshot: ApplicationSnapshot): Promise<void> {
    await this.replicator.receive(snapshot);
  }

  /** A peer's change, answered once it is stored and in force here (its caller waits for this). */
  @MessagePattern(CONFIG_APPLICATION_APPLY)
  async apply(@Payload() snapshot: ApplicationSnapshot): Promise<ConfigApplyReply> {
    await this.replicator.receive(snapshot, { echoInBackground: true });
    return { applied: true };
  }

  /** Who an application is, for the services of this country (a receipt names its controller). */
  @MessagePattern(GATEWAY_APPLICATION_IDENTITY)
  identity(@Payload() request: ApplicationIdentityRequest): ApplicationIdentityReply {
    const application = this.index.application(request.application_id);
    if (!application) throw notFound('Application');
    return { id: application.id, name: application.name, environment: application.environment };
  }

  @MessagePattern(CONFIG_SNAPSHOT)
  async snapshot(@Payload() request: ConfigSnapshotRequest): Promise<ConfigSnapshotReply> {
    // A part at a time (snapshotPart, by application id): hundreds of applications are more than one message.
    const { items, ...cursor } = snapshotPart(await this.replicator.everything(), (application) => application.id, request.after);
    return { applications: items, ...cursor };
  }
}
