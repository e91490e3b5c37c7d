import { describeServiceSchema } from '@dcr/testing';
import { gatewayService } from '../src/gateway.service';

describeServiceSchema(gatewayService);
