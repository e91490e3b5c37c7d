import { Module } from '@nestjs/common';
import { ServiceDefinition } from '@dcr/service-kit';

/**
 * The receipts service's own features arrive with their issues; until then it runs, owns its schema
 * (`receipts`, created and migrated at start) and answers `receipts.health` like every service.
 */
@Module({})
export class ReceiptsModule {}

export const receiptsService: ServiceDefinition = {
  name: 'receipts',
  schema: 'receipts',
  entities: [],
  migrations: [],
  module: ReceiptsModule,
};
