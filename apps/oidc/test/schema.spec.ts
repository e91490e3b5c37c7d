import { describeServiceSchema } from '@dcr/testing';
import { oidcService } from '../src/oidc.service';

describeServiceSchema(oidcService);
