import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { receiptsService } from './receipts.service';

void runStandalone(receiptsService);
