import { describeServiceSchema } from '@dcr/testing';
import { mcpGatewayService } from '../src/mcp-gateway.service';

describeServiceSchema(mcpGatewayService);
