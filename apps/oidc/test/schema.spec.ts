import { checkServiceSchema } from '@dcr/testing';
import { oidcService } from '../src/oidc.service';

describe('oidc schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(oidcService);
    expect(check.applied).toHaveLength(oidcService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
