import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { oidcService } from './oidc.service';

void runStandalone(oidcService);
