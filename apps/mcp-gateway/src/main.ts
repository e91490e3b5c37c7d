import 'reflect-metadata';
import { runStandalone } from '@dcr/service-kit';
import { mcpGatewayService } from './mcp-gateway.service';

void runStandalone(mcpGatewayService);
