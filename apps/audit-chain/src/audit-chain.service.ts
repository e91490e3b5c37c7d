import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditChainEnvironment } from '@dcr/config';
import { ServiceDefinition } from '@dcr/service-kit';
import { AnchorPublisher } from './anchors/anchor-publisher';
import { AnchorRecord } from './anchors/anchor.entity';
import { AnchorsRepository } from './anchors/anchors.repository';
import { WitnessPosition } from './anchors/witness-position.entity';
import { WitnessReceiptRecord } from './anchors/witness-receipt.entity';
import { AuditKeys } from './keys/audit-keys';
import { PublishedKey } from './keys/published-key.entity';
import { CreateAuditTrail1764100000000 } from './migrations/1764100000000-create-audit-trail';
import { MerkleInnerNodesFromLevelFour1765100000000 } from './migrations/1765100000000-merkle-inner-nodes-from-level-four';
import { AuditAppender } from './trail/audit-appender';
import { AuditEntryRecord } from './trail/audit-entry.entity';
import { ChainHead } from './trail/chain-head.entity';
import { MerkleNode } from './trail/merkle-node.entity';
import { TrailController } from './trail/trail.controller';
import { TrailReader } from './trail/trail-reader';
import { TrailRepository } from './trail/trail.repository';
import { CheckpointWitness } from './witness/checkpoint-witness';
import { WitnessedLog } from './witness/witnessed-log.entity';

export const AUDIT_CHAIN_ENTITIES = [AuditEntryRecord, ChainHead, MerkleNode, AnchorRecord, WitnessReceiptRecord, WitnessPosition, WitnessedLog, PublishedKey];

/**
 * The country's tamper-evident trail: hash-chained entries per application, one RFC 6962 Merkle tree
 * over all of them, signed checkpoints (anchors) cosigned by witnesses, and this country's own
 * witness for the other countries' logs.
 */
@Module({
  imports: [ScheduleModule.forRoot(), TypeOrmModule.forFeature(AUDIT_CHAIN_ENTITIES)],
  controllers: [TrailController],
  providers: [AuditKeys, TrailRepository, AuditAppender, TrailReader, AnchorsRepository, AnchorPublisher, CheckpointWitness],
})
export class AuditChainModule {}

export const auditChainService: ServiceDefinition = {
  name: 'audit-chain',
  schema: 'audit_chain',
  entities: AUDIT_CHAIN_ENTITIES,
  migrations: [CreateAuditTrail1764100000000, MerkleInnerNodesFromLevelFour1765100000000],
  module: AuditChainModule,
  environment: AuditChainEnvironment,
};
