import { Module } from '@nestjs/common';
import { ServiceDefinition } from '@dcr/service-kit';

/**
 * The mcp-gateway service's own features arrive with their issues; until then it runs, owns its schema
 * (`mcp_gateway`, created and migrated at start) and answers `mcp-gateway.health` like every service.
 */
@Module({})
export class McpGatewayModule {}

export const mcpGatewayService: ServiceDefinition = {
  name: 'mcp-gateway',
  schema: 'mcp_gateway',
  entities: [],
  migrations: [],
  module: McpGatewayModule,
};
