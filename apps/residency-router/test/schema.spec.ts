import { describeServiceSchema } from '@dcr/testing';
import { residencyRouterService } from '../src/residency-router.service';

describeServiceSchema(residencyRouterService);
