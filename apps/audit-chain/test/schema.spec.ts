import { describeServiceSchema } from '@dcr/testing';
import { auditChainService } from '../src/audit-chain.service';

describeServiceSchema(auditChainService);
