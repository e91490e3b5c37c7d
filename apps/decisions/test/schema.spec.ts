import { checkServiceSchema } from '@dcr/testing';
import { decisionsService } from '../src/decisions.service';

describe('decisions schema', () => {
  it('matches its entities after its migrations, and reverts cleanly', async () => {
    const check = await checkServiceSchema(decisionsService);
    expect(check.applied).toHaveLength(decisionsService.migrations.length);
    expect(check.pendingAfterMigrations).toEqual([]);
    expect(check.tablesAfterRevert).toEqual([]);
  });
});
