import { Module } from '@nestjs/common';
import { ServiceDefinition } from '@dcr/service-kit';

/**
 * The oidc service's own features arrive with their issues; until then it runs, owns its schema
 * (`oidc`, created and migrated at start) and answers `oidc.health` like every service.
 */
@Module({})
export class OidcModule {}

export const oidcService: ServiceDefinition = {
  name: 'oidc',
  schema: 'oidc',
  entities: [],
  migrations: [],
  module: OidcModule,
};
