import { checkServiceSchema } from '@dcr/testing';
import { mcpGatewayService } from '../src/mcp-gateway.service';

describe('mcp-gateway schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(mcpGatewayService);
    expect(check.applied).toHaveLength(mcpGatewayService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
