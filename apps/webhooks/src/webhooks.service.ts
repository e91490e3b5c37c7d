import { Module } from '@nestjs/common';
import { ServiceDefinition } from '@dcr/service-kit';

/**
 * The webhooks service's own features arrive with their issues; until then it runs, owns its schema
 * (`webhooks`, created and migrated at start) and answers `webhooks.health` like every service.
 */
@Module({})
export class WebhooksModule {}

export const webhooksService: ServiceDefinition = {
  name: 'webhooks',
  schema: 'webhooks',
  entities: [],
  migrations: [],
  module: WebhooksModule,
};
