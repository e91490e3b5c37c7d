import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  AUDIT_ANCHOR_NOW,
  AUDIT_ANCHORS,
  AUDIT_APPEND,
  AUDIT_CONSISTENCY_PROOF,
  AUDIT_EXPORT,
  AUDIT_INCLUSION_PROOF,
  AUDIT_LIST,
  AUDIT_WITNESS_ADD_CHECKPOINT,
  AUDIT_WITNESS_CONFIGURATION,
  AuditAnchorsReply,
  AuditAnchorsRequest,
  AuditAppendRequest,
  AuditConsistencyRequest,
  AuditExportRequest,
  AuditInclusionRequest,
  AuditListRequest,
  WitnessAddCheckpointRequest,
  WitnessConfigurationMessage,
} from '@dcr/contracts';
import { AnchorPublisher } from '../anchors/anchor-publisher';
import { AnchorsRepository } from '../anchors/anchors.repository';
import { AuditKeys } from '../keys/audit-keys';
import { CheckpointWitness } from '../witness/checkpoint-witness';
import { AuditAppender } from './audit-appender';
import { TrailReader } from './trail-reader';

@Controller()
export class TrailController {
  constructor(
    private readonly appender: AuditAppender,
    private readonly reader: TrailReader,
    private readonly anchors: AnchorsRepository,
    private readonly publisher: AnchorPublisher,
    private readonly witness: CheckpointWitness,
    private readonly keys: AuditKeys,
  ) {}

  @MessagePattern(AUDIT_APPEND)
  append(@Payload() request: AuditAppendRequest) {
    return this.appender.append(request);
  }

  @MessagePattern(AUDIT_LIST)
  list(@Payload() request: AuditListRequest) {
    return this.reader.list(request);
  }

  @MessagePattern(AUDIT_EXPORT)
  export(@Payload() request: AuditExportRequest) {
    return this.reader.export(request);
  }

  @MessagePattern(AUDIT_INCLUSION_PROOF)
  inclusion(@Payload() request: AuditInclusionRequest) {
    return this.reader.inclusion(request);
  }

  @MessagePattern(AUDIT_CONSISTENCY_PROOF)
  consistency(@Payload() request: AuditConsistencyRequest) {
    return this.reader.consistency(request);
  }

  @MessagePattern(AUDIT_ANCHORS)
  async listAnchors(@Payload() request: AuditAnchorsRequest): Promise<AuditAnchorsReply> {
    const beforeSize = request.before ? await this.anchors.sizeOf(request.before) : null;
    const anchors = await this.anchors.list(this.keys.country, request.limit + 1, beforeSize);
    return { anchors: anchors.slice(0, request.limit), has_more: anchors.length > request.limit };
  }

  @MessagePattern(AUDIT_ANCHOR_NOW)
  anchorNow() {
    return this.publisher.anchorNow();
  }

  @MessagePattern(AUDIT_WITNESS_ADD_CHECKPOINT)
  addCheckpoint(@Payload() request: WitnessAddCheckpointRequest) {
    return this.witness.addCheckpoint(request.body);
  }

  @MessagePattern(AUDIT_WITNESS_CONFIGURATION)
  async configuration(): Promise<WitnessConfigurationMessage> {
    const [checkpointKeys, cosignatureKeys] = await Promise.all([this.keys.publishedKeys('checkpoint'), this.keys.publishedKeys('cosignature')]);
    return {
      country: this.keys.country,
      log: { origin: this.keys.origin, checkpoint_keys: checkpointKeys },
      witness: {
        name: this.keys.cosigner.name,
        cosignature_keys: cosignatureKeys,
        add_checkpoint_url: this.keys.publicBaseUrl ? `${this.keys.publicBaseUrl}/witness/add-checkpoint` : null,
      },
      anchor_interval_seconds: this.keys.anchorIntervalMs / 1000,
      witnesses: [
        ...this.publisherPeers(),
        ...this.keys.externalWitnesses.map(({ url, verifierKey }) => ({ name: verifierKey.split('+')[0], verifier_key: verifierKey, url, kind: 'external' as const })),
      ],
    };
  }

  private publisherPeers() {
    return this.publisher.peerCountries().map((country) => ({ name: `peer:${country}`, verifier_key: null, url: null, kind: 'peer' as const }));
  }
}
