import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { auditChainService } from './audit-chain.service';

void runStandalone(auditChainService);
