import 'reflect-metadata';
import { GatewayEnvironment } from '@dcr/config';
import { runStandalone } from '@dcr/service-kit';
import { startGateway } from './bootstrap/start-gateway';
import { gatewayService } from './gateway.service';

void runStandalone(gatewayService, startGateway, GatewayEnvironment);
