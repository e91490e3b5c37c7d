import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { decisionsService } from './decisions.service';

void runStandalone(decisionsService);
