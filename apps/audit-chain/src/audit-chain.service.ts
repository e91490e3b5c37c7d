import { Module } from '@nestjs/common';
import { ServiceDefinition } from '@dcr/service-kit';

/**
 * The audit-chain service's own features arrive with their issues; until then it runs, owns its schema
 * (`audit_chain`, created and migrated at start) and answers `audit-chain.health` like every service.
 */
@Module({})
export class AuditChainModule {}

export const auditChainService: ServiceDefinition = {
  name: 'audit-chain',
  schema: 'audit_chain',
  entities: [],
  migrations: [],
  module: AuditChainModule,
};
