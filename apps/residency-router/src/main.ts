import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { residencyRouterService } from './residency-router.service';

void runStandalone(residencyRouterService);
