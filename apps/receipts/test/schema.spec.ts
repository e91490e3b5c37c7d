import { describeServiceSchema } from '@dcr/testing';
import { receiptsService } from '../src/receipts.service';

describeServiceSchema(receiptsService);
