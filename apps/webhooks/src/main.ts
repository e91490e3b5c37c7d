import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { webhooksService } from './webhooks.service';

void runStandalone(webhooksService);
