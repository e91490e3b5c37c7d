import { checkServiceSchema } from '@dcr/testing';
import { residencyRouterService } from '../src/residency-router.service';

describe('residency-router schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(residencyRouterService);
    expect(check.applied).toHaveLength(residencyRouterService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
