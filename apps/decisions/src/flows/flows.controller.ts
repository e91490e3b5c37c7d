import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  CreateFlowRequest,
  FLOWS_ACTIVATE,
  FLOWS_CHANGED,
  FLOWS_CREATE,
  FLOWS_GET,
  FLOWS_LIST,
  FLOWS_NEW_VERSION,
  FLOWS_SNAPSHOT,
  FLOWS_UPDATE,
  FlowChangedEvent,
  FlowIdRequest,
  FlowMessage,
  FlowPage,
  FlowsSnapshotReply,
  FlowsSnapshotRequest,
  GetFlowRequest,
  ListFlowsRequest,
  UpdateFlowRequest,
} from '@dcr/contracts';
import { FlowReplicator } from './flow-replicator';
import { FlowsService } from './flows.service';

@Controller()
export class FlowsController {
  constructor(
    private readonly flows: FlowsService,
    private readonly replicator: FlowReplicator,
  ) {}

  @MessagePattern(FLOWS_CREATE)
  create(@Payload() request: CreateFlowRequest): Promise<FlowMessage> {
    return this.flows.create(request);
  }

  @MessagePattern(FLOWS_GET)
  get(@Payload() request: GetFlowRequest): Promise<FlowMessage> {
    return this.flows.get(request);
  }

  @MessagePattern(FLOWS_LIST)
  list(@Payload() request: ListFlowsRequest): Promise<FlowPage> {
    return this.flows.list(request);
  }

  @MessagePattern(FLOWS_UPDATE)
  update(@Payload() request: UpdateFlowRequest): Promise<FlowMessage> {
    return this.flows.update(request);
  }

  @MessagePattern(FLOWS_ACTIVATE)
  activate(@Payload() request: FlowIdRequest): Promise<FlowMessage> {
    return this.flows.activate(request);
  }

  @MessagePattern(FLOWS_NEW_VERSION)
  newVersion(@Payload() request: UpdateFlowRequest): Promise<FlowMessage> {
    return this.flows.newVersion(request);
  }

  @EventPattern(FLOWS_CHANGED)
  async changed(@Payload() event: FlowChangedEvent): Promise<void> {
    await this.replicator.receive(event.versions);
  }

  @MessagePattern(FLOWS_SNAPSHOT)
  snapshot(@Payload() request: FlowsSnapshotRequest): Promise<FlowsSnapshotReply> {
    return this.replicator.authoredHere(request.after);
  }
}
