import { describeServiceSchema } from '@dcr/testing';
import { webhooksService } from '../src/webhooks.service';

describeServiceSchema(webhooksService);
