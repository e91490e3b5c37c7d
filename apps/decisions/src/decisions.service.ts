import { ServiceDefinition } from '@dcr/service-kit';
import { CreateSubjects1763800000000 } from './migrations/1763800000000-create-subjects';
import { Subject } from './subjects/subject.entity';
import { SubjectsModule } from './subjects/subjects.module';

export const decisionsService: ServiceDefinition = {
  name: 'decisions',
  schema: 'decisions',
  entities: [Subject],
  migrations: [CreateSubjects1763800000000],
  module: SubjectsModule,
};
