import { checkServiceSchema } from '@dcr/testing';
import { webhooksService } from '../src/webhooks.service';

describe('webhooks schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(webhooksService);
    expect(check.applied).toHaveLength(webhooksService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
