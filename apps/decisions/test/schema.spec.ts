import { describeServiceSchema } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';

describeServiceSchema(decisionsService);
