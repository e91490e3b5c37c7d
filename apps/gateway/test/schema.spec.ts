import { checkServiceSchema } from '@dcr/testing';
import { gatewayService } from '../src/gateway.service';

describe('gateway schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(gatewayService);
    expect(check.applied).toHaveLength(gatewayService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
