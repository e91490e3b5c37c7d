import { ResidencyRouterEnvironment } from '@dcr/config';
import { ServiceDefinition } from '@dcr/service-kit';
import { DirectoryEntry } from './directory/directory-entry.entity';
import { DirectoryModule } from './directory/directory.module';
import { CreateDirectory1763800000000 } from './migrations/1763800000000-create-directory';
import { DirectoryCountsItsParties1766700000000 } from './migrations/1766700000000-directory-counts-its-parties';

export const residencyRouterService: ServiceDefinition = {
  name: 'residency-router',
  schema: 'residency_router',
  entities: [DirectoryEntry],
  migrations: [CreateDirectory1763800000000, DirectoryCountsItsParties1766700000000],
  module: DirectoryModule,
  environment: ResidencyRouterEnvironment,
};
