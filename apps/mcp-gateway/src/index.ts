export * from './mcp-gateway.service';
